package tdstest_test

import (
	"context"
	"crypto/tls"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
)

// tlsServer starts a server of version v with a certificate for hosts
// signed by a fresh CA (no certificate when hosts is empty) and returns it
// with its address and the CA's PEM file.
func tlsServer(t *testing.T, v string, h tdstest.Handler, hosts ...string) (*tdstest.Server, string, string) {
	t.Helper()
	ca, err := tdstest.NewCA("tdstest CA")
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, ca.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	var tc *tls.Config
	if len(hosts) > 0 {
		if tc, err = ca.ServerTLS(hosts...); err != nil {
			t.Fatal(err)
		}
	}
	srv := tdstest.New(tdstest.Config{User: testUser, Password: testPass, Handler: h, ServerVersion: v, Logf: t.Logf, TLS: tc})
	addr, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, addr, caFile
}

// tlsDSN is a DSN with the given query parameters, without the
// encrypt=disable of dsn.
func tlsDSN(addr string, params url.Values) string {
	params.Set("database", "msdb")
	params.Set("dial timeout", "5")
	u := url.URL{Scheme: "sqlserver", User: url.UserPassword(testUser, testPass), Host: addr, RawQuery: params.Encode()}
	return u.String()
}

func TestTLSModes(t *testing.T) {
	// A reply larger than a TLS record and a TDS packet, so that both
	// framings are exercised after the handshake.
	long := strings.Repeat("restore ", 5000)
	h := byQuery{"select @@version": {{Columns: []tdstest.Column{{Name: "v", Type: tdstest.NVarChar, Size: tdstest.Max}}, Rows: [][]any{{long}}}}}
	type want struct {
		enc tdstest.Encryption
		err string // the login fails with this
	}
	cases := []struct {
		name    string
		version string
		hosts   []string // the server certificate's names; none = no TLS
		params  url.Values
		withCA  bool
		want    want
	}{
		{"strict on 2022", "16.0.4135.4", []string{"127.0.0.1"}, url.Values{"encrypt": {"strict"}}, true, want{enc: tdstest.Strict}},
		{"true on 2022", "16.0.4135.4", []string{"127.0.0.1"}, url.Values{"encrypt": {"true"}, "TrustServerCertificate": {"false"}}, true, want{enc: tdstest.TLS}},
		{"true on 2019", "15.0.4236.7", []string{"127.0.0.1"}, url.Values{"encrypt": {"true"}}, true, want{enc: tdstest.TLS}},
		{"strict on 2019", "15.0.4236.7", []string{"127.0.0.1"}, url.Values{"encrypt": {"strict"}}, true, want{err: "TLS Handshake failed"}},
		{"false with a certificate", "16.0.4135.4", []string{"127.0.0.1"}, url.Values{"encrypt": {"false"}}, true, want{enc: tdstest.LoginOnly}},
		{"disable with a certificate", "16.0.4135.4", []string{"127.0.0.1"}, url.Values{"encrypt": {"disable"}}, true, want{enc: tdstest.Unencrypted}},
		{"false without TLS", "16.0.4135.4", nil, url.Values{"encrypt": {"false"}}, false, want{enc: tdstest.Unencrypted}},
		{"driver default without TLS", "16.0.4135.4", nil, url.Values{}, false, want{enc: tdstest.Unencrypted}},
		{"true without TLS", "16.0.4135.4", nil, url.Values{"encrypt": {"true"}}, false, want{err: "server does not support encryption"}},
		{"strict without TLS", "16.0.4135.4", nil, url.Values{"encrypt": {"strict"}}, false, want{err: "TLS Handshake failed"}},
		{"unknown CA", "16.0.4135.4", []string{"127.0.0.1"}, url.Values{"encrypt": {"true"}}, false, want{err: "certificate signed by unknown authority"}},
		{"unknown CA strict", "16.0.4135.4", []string{"127.0.0.1"}, url.Values{"encrypt": {"strict"}}, false, want{err: "certificate signed by unknown authority"}},
		{"other name", "16.0.4135.4", []string{"sql01.corp.example"}, url.Values{"encrypt": {"true"}}, true, want{err: "127.0.0.1"}},
		{"other name, hostNameInCertificate", "16.0.4135.4", []string{"sql01.corp.example"},
			url.Values{"encrypt": {"strict"}, "hostNameInCertificate": {"sql01.corp.example"}}, true, want{enc: tdstest.Strict}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, addr, caFile := tlsServer(t, tc.version, h, tc.hosts...)
			if tc.withCA {
				tc.params.Set("certificate", caFile)
			}
			db := openDB(t, tlsDSN(addr, tc.params))
			var got string
			err := db.QueryRowContext(ctxT(t), "select @@version").Scan(&got)
			logins := srv.Logins()
			if tc.want.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want.err) {
					t.Fatalf("error %v, want one with %q", err, tc.want.err)
				}
				if len(logins) != 0 {
					t.Errorf("the server received a LOGIN7 (%+v) on a connection the client refused", logins)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != long {
				t.Errorf("reply of %d characters, want %d", len(got), len(long))
			}
			if len(logins) != 1 || logins[0].Encryption != tc.want.enc || logins[0].User != testUser {
				t.Fatalf("logins %+v, want one %v", logins, tc.want.enc)
			}
			if v := logins[0].TDSVersion; (tc.want.enc == tdstest.Strict) != (v == 0x08000000) {
				t.Errorf("LOGIN7 TDS version %#x with %v", v, tc.want.enc)
			}
		})
	}
}

// A connection keeps working after TLS: several queries, a transaction and
// a cancelled query (attention) on one pooled connection.
func TestTLSSessionKeepsWorking(t *testing.T) {
	for _, enc := range []string{"strict", "true", "false"} {
		t.Run(enc, func(t *testing.T) {
			srv, addr, caFile := tlsServer(t, "16.0.4135.4", byQuery{
				"select 1 as n": {{Columns: []tdstest.Column{{Name: "n", Type: tdstest.Int}}, Rows: [][]any{{1}}}},
			}, "127.0.0.1")
			db := openDB(t, tlsDSN(addr, url.Values{"encrypt": {enc}, "certificate": {caFile}}))
			db.SetMaxOpenConns(1)
			ctx := ctxT(t)
			for i := 0; i < 3; i++ {
				var n int
				if err := db.QueryRowContext(ctx, "select 1 as n").Scan(&n); err != nil || n != 1 {
					t.Fatalf("query %d: %d, %v", i, n, err)
				}
			}
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := db.ExecContext(cctx, "select 1 as n"); err == nil {
				t.Error("a cancelled query succeeded")
			}
			var n int
			if err := db.QueryRowContext(ctx, "select 1 as n").Scan(&n); err != nil {
				t.Fatalf("after the cancelled query: %v", err)
			}
			if l := srv.Logins(); len(l) != 1 {
				t.Errorf("%d logins on one pooled connection", len(l))
			}
		})
	}
}
