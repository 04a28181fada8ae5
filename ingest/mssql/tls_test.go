package mssql_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
)

const tlsPass = "S3cret-for-the-wire!"

// tlsServer starts a TDS server of version v accepting rw/tlsPass, with a
// certificate for hosts signed by a CA made now (no TLS when hosts is
// empty). It returns the server, its port and the CA's PEM file.
func tlsServer(t *testing.T, v string, hosts ...string) (*tdstest.Server, int, string) {
	t.Helper()
	ca, err := tdstest.NewCA("restorewatch test CA")
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
	srv := tdstest.New(tdstest.Config{User: "rw", Password: tlsPass, ServerVersion: v, TLS: tc, Logf: t.Logf})
	addr, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, port(t, addr), caFile
}

func port(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return n
}

// instance is the collector's view of the server: encryption settings left
// as the test gives them.
func instance(t *testing.T, p int, mod func(*mssql.Instance)) mssql.Instance {
	t.Setenv("RW_T_TLS_PW", tlsPass)
	in := mssql.Instance{Name: "SQL01", Host: "127.0.0.1", Port: p, Auth: "sql", User: "rw", PasswordEnv: "RW_T_TLS_PW"}
	if mod != nil {
		mod(&in)
	}
	return in
}

func connectTLS(t *testing.T, in mssql.Instance) (*mssql.Session, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := mssql.Connect(ctx, in, 10*time.Second)
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, err
}

func TestDefaultLoginIsEncryptedAndValidated(t *testing.T) {
	cases := []struct {
		version string
		want    tdstest.Encryption
		mode    string
	}{
		{"16.0.4135.4", tdstest.Strict, mssql.EncryptStrict}, // SQL Server 2022: TDS 8
		{"15.0.4236.7", tdstest.TLS, mssql.EncryptTrue},      // 2019: TDS 8 refused, TDS 7.4 TLS
		{"10.50.6000.34", tdstest.TLS, mssql.EncryptTrue},    // 2008 R2
	}
	for _, tc := range cases {
		t.Run(tc.version, func(t *testing.T) {
			srv, p, caFile := tlsServer(t, tc.version, "127.0.0.1")
			in := instance(t, p, func(in *mssql.Instance) { in.Certificate = caFile })
			s, err := connectTLS(t, in)
			if err != nil {
				t.Fatal(err)
			}
			if s.Encrypt != tc.mode {
				t.Errorf("session encryption %q, want %q", s.Encrypt, tc.mode)
			}
			l := srv.Logins()
			if len(l) != 1 || l[0].Encryption != tc.want {
				t.Errorf("logins %+v, want one %v", l, tc.want)
			}
			if in.Insecure() != "" {
				t.Errorf("default settings reported insecure: %s", in.Insecure())
			}
		})
	}
}

// A server before 2022 that leaves the TDS 8 ClientHello unanswered costs
// the strict attempt a third of the login timeout, then TDS 7.x TLS logs in.
func TestStrictUnansweredFallsBack(t *testing.T) {
	ca, err := tdstest.NewCA("restorewatch test CA")
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, ca.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	tc, err := ca.ServerTLS("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	srv := tdstest.New(tdstest.Config{User: "rw", Password: tlsPass, ServerVersion: "15.0.4236.7", TLS: tc, TDS8Unanswered: true})
	addr, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	in := instance(t, port(t, addr), func(in *mssql.Instance) { in.Certificate = caFile })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := mssql.Connect(ctx, in, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if l := srv.Logins(); s.Encrypt != mssql.EncryptTrue || len(l) != 1 || l[0].Encryption != tdstest.TLS {
		t.Errorf("encryption %q, logins %+v", s.Encrypt, l)
	}
	if n := srv.Accepted(); n != 2 {
		t.Errorf("%d connections, want the unanswered TDS 8 one and the TDS 7.x one", n)
	}
}

// The fake server: it offers no TLS and reads the password from
// LOGIN7. With the default settings the collector never sends it LOGIN7.
func TestDefaultRefusesServerWithoutTLS(t *testing.T) {
	srv, p, _ := tlsServer(t, "16.0.4135.4")
	_, err := connectTLS(t, instance(t, p, nil))
	var e *mssql.Error
	if !errors.As(err, &e) || e.Kind != mssql.KindConfig || !strings.Contains(e.Msg, "offers no TLS") || !strings.Contains(e.Msg, `encrypt = "false"`) {
		t.Fatalf("error %v, want a configuration error saying the server offers no TLS", err)
	}
	if l := srv.Logins(); len(l) != 0 {
		t.Fatalf("the server without TLS received %d LOGIN7 (%+v)", len(l), l)
	}
	// Written explicitly, encrypt = "false" logs in, with the warning.
	in := instance(t, p, func(in *mssql.Instance) { in.Encrypt = mssql.EncryptFalse })
	if _, err := connectTLS(t, in); err != nil {
		t.Fatal(err)
	}
	if l := srv.Logins(); len(l) != 1 || l[0].Encryption != tdstest.Unencrypted {
		t.Errorf("logins %+v", l)
	}
	if w := in.Insecure(); !strings.HasPrefix(w, mssql.InsecureNote) || !strings.Contains(w, "in clear") {
		t.Errorf("warning %q", w)
	}
}

func TestCertificateValidation(t *testing.T) {
	t.Run("unknown CA", func(t *testing.T) {
		srv, p, caFile := tlsServer(t, "16.0.4135.4", "127.0.0.1")
		_, err := connectTLS(t, instance(t, p, nil)) // the CA is in no trust store
		var e *mssql.Error
		if !errors.As(err, &e) || e.Kind != mssql.KindConfig || !strings.Contains(e.Msg, "not trusted") || !strings.Contains(e.Msg, "unknown authority") {
			t.Fatalf("error %v, want the certificate refused", err)
		}
		if l := srv.Logins(); len(l) != 0 {
			t.Fatalf("LOGIN7 sent to an untrusted server: %+v", l)
		}
		// Not even TDS 7.x with validation is tried after strict met the
		// same certificate; trusting it is explicit and warned about.
		in := instance(t, p, func(in *mssql.Instance) { in.TrustServerCertificate = true })
		if _, err := connectTLS(t, in); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(in.Insecure(), "trust_server_certificate") {
			t.Errorf("warning %q", in.Insecure())
		}
		if _, err := connectTLS(t, instance(t, p, func(in *mssql.Instance) { in.Certificate = caFile })); err != nil {
			t.Fatalf("with the CA file: %v", err)
		}
	})
	t.Run("host name in certificate", func(t *testing.T) {
		srv, p, caFile := tlsServer(t, "16.0.4135.4", "sql01.corp.example")
		_, err := connectTLS(t, instance(t, p, func(in *mssql.Instance) { in.Certificate = caFile }))
		var e *mssql.Error
		if !errors.As(err, &e) || e.Kind != mssql.KindConfig || !strings.Contains(e.Msg, "x509: cannot validate certificate for 127.0.0.1") || !strings.Contains(e.Msg, "host_name_in_certificate") {
			t.Fatalf("error %v, want the name mismatch", err)
		}
		s, err := connectTLS(t, instance(t, p, func(in *mssql.Instance) {
			in.Certificate, in.HostNameInCertificate = caFile, "sql01.corp.example"
		}))
		if err != nil {
			t.Fatal(err)
		}
		if l := srv.Logins(); s.Encrypt != mssql.EncryptStrict || len(l) != 1 || l[0].Encryption != tdstest.Strict {
			t.Errorf("encryption %q, logins %+v", s.Encrypt, l)
		}
	})
	t.Run("strict on 2019", func(t *testing.T) {
		_, p, caFile := tlsServer(t, "15.0.4236.7", "127.0.0.1")
		_, err := connectTLS(t, instance(t, p, func(in *mssql.Instance) { in.Certificate, in.Encrypt = caFile, mssql.EncryptStrict }))
		var e *mssql.Error
		if !errors.As(err, &e) || e.Kind != mssql.KindConfig || !strings.Contains(e.Msg, "SQL Server 2022") {
			t.Fatalf("error %v, want strict refused by a 2019 server", err)
		}
	})
}

// sniffer relays TCP to a server and keeps every byte both ways: what
// anyone on the collector's path sees.
type sniffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *sniffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *sniffer) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.buf.Bytes())
}

func sniff(t *testing.T, to int) (*sniffer, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &sniffer{}
	var wg sync.WaitGroup
	var conns []net.Conn
	var mu sync.Mutex
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(to)))
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, up)
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); io.Copy(up, io.TeeReader(c, s)); up.Close() }()
			go func() { defer wg.Done(); io.Copy(c, io.TeeReader(up, s)); c.Close() }()
		}
	}()
	return s, port(t, ln.Addr().String())
}

// loginForms are the spellings of a password on the wire: as typed, in
// UTF-16LE, and as LOGIN7 carries it (UTF-16LE, nibbles swapped, XOR 0xA5).
func loginForms(pw string) map[string][]byte {
	var u16 []byte
	for _, u := range utf16.Encode([]rune(pw)) {
		u16 = binary.LittleEndian.AppendUint16(u16, u)
	}
	mangled := make([]byte, len(u16))
	for i, b := range u16 {
		mangled[i] = (b<<4 | b>>4) ^ 0xA5
	}
	return map[string][]byte{"plain": []byte(pw), "UTF-16LE": u16, "LOGIN7": mangled}
}

// The password never crosses the wire readable with the default settings,
// on TDS 8 and on TDS 7.x TLS; the same sniffer reads it from an
// encrypt = "disable" login, so it would see it if it were there.
func TestPasswordNeverCrossesInClear(t *testing.T) {
	for _, tc := range []struct {
		name, version, encrypt string
		readable               bool
	}{
		{"default on 2022", "16.0.4135.4", "", false},
		{"default on 2019", "15.0.4236.7", "", false},
		{"false on a server with TLS", "16.0.4135.4", mssql.EncryptFalse, false},
		{"disable (control)", "16.0.4135.4", mssql.EncryptDisable, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, p, caFile := tlsServer(t, tc.version, "127.0.0.1")
			wire, via := sniff(t, p)
			in := instance(t, via, func(in *mssql.Instance) {
				in.Encrypt = tc.encrypt
				if tc.encrypt != mssql.EncryptDisable {
					in.Certificate = caFile
				}
			})
			s, err := connectTLS(t, in)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			if len(srv.Logins()) != 1 {
				t.Fatalf("logins %+v", srv.Logins())
			}
			got := wire.bytes()
			if len(got) < 200 {
				t.Fatalf("the sniffer saw only %d bytes", len(got))
			}
			seen := false
			for form, b := range loginForms(tlsPass) {
				if bytes.Contains(got, b) {
					seen = true
					if !tc.readable {
						t.Errorf("the password crossed the wire readable (%s)", form)
					}
				}
			}
			if tc.readable && !seen {
				t.Error("the sniffer did not see the password of an unencrypted login: it proves nothing")
			}
		})
	}
}
