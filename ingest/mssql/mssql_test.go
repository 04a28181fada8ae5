package mssql_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/microsoft/go-mssqldb/msdsn"
	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/store"
)

const hostile = `p@ss:w/o?r#d%20&x=1;Server=evil;{}'"` + "é"

func TestDSNEscapesEverything(t *testing.T) {
	for _, in := range []mssql.Instance{
		{Host: "sql01.corp.example", Port: 1433, Auth: "sql", User: `rw;user@x`, Encrypt: "strict"},
		{Host: "sql02", InstanceName: "REPORTING", Auth: "windows", User: `CORP\svc rw`, TrustServerCertificate: true},
		{Host: "fe80::1", Auth: "sql", User: "rw"},
	} {
		dsn := mssql.BuildDSN(&in, hostile)
		p, err := msdsn.Parse(dsn)
		if err != nil {
			t.Fatalf("%s: %v", in.Host, err)
		}
		if p.Password != hostile || p.User != in.User || p.AppName != "restorewatch" || p.Database != "master" {
			t.Errorf("%s: parsed user %q password ok=%v app %q db %q", in.Host, p.User, p.Password == hostile, p.AppName, p.Database)
		}
		if in.InstanceName != "" && p.Instance != in.InstanceName {
			t.Errorf("instance %q, want %q", p.Instance, in.InstanceName)
		}
		if in.Port != 0 && p.Port != uint64(in.Port) {
			t.Errorf("port %d", p.Port)
		}
		if p.DialTimeout != 30*time.Second || p.ConnTimeout != 30*time.Second {
			t.Errorf("timeouts %v %v", p.DialTimeout, p.ConnTimeout)
		}
		if strings.Contains(mssql.Scrub(dsn, hostile), "ss:w") {
			t.Errorf("scrub left the password in %s", mssql.Scrub(dsn, hostile))
		}
	}
}

// The DSN writes every TLS key: go-mssqldb's defaults (no encrypt) log in
// unencrypted to a server without TLS and trust any certificate.
func TestDSNEncryption(t *testing.T) {
	cases := []struct {
		in         mssql.Instance
		encryption msdsn.Encryption
		skipVerify bool
		serverName string
	}{
		{mssql.Instance{Host: "sql01"}, msdsn.EncryptionStrict, false, "sql01"},
		{mssql.Instance{Host: "sql01", Encrypt: "true"}, msdsn.EncryptionRequired, false, "sql01"},
		{mssql.Instance{Host: "10.0.0.5", Encrypt: "strict", HostNameInCertificate: "sql01.corp.example"}, msdsn.EncryptionStrict, false, "sql01.corp.example"},
		{mssql.Instance{Host: "sql01", Encrypt: "false"}, msdsn.EncryptionOff, false, "sql01"},
		{mssql.Instance{Host: "sql01", Encrypt: "true", TrustServerCertificate: true}, msdsn.EncryptionRequired, true, "sql01"},
		{mssql.Instance{Host: "sql01", Encrypt: "disable"}, msdsn.EncryptionDisabled, false, ""},
	}
	for _, tc := range cases {
		tc.in.Auth, tc.in.User = "sql", "u"
		p, err := msdsn.Parse(mssql.BuildDSN(&tc.in, "pw"))
		if err != nil {
			t.Fatalf("%+v: %v", tc.in, err)
		}
		if p.Encryption != tc.encryption {
			t.Errorf("%+v: encryption %v, want %v", tc.in, p.Encryption, tc.encryption)
		}
		if tc.encryption == msdsn.EncryptionDisabled {
			continue
		}
		if p.TLSConfig == nil || p.TLSConfig.InsecureSkipVerify != tc.skipVerify || p.TLSConfig.ServerName != tc.serverName {
			t.Errorf("%+v: TLS config %+v", tc.in, p.TLSConfig)
		}
	}
}

func TestDSNCertificate(t *testing.T) {
	// msdsn.Parse reads the file, so only the URL is checked here.
	in := mssql.Instance{Host: "h", Auth: "sql", User: "u", Certificate: "/etc/ssl/ca b&c.pem"}
	u, err := url.Parse(mssql.BuildDSN(&in, "x"))
	if err != nil || u.Query().Get("certificate") != in.Certificate {
		t.Errorf("certificate %q (%v)", u.Query().Get("certificate"), err)
	}
}

func TestSecretNeverPrints(t *testing.T) {
	s := mssql.NewSecret(hostile)
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "password", s)
	j, _ := json.Marshal(map[string]any{"p": s})
	out := fmt.Sprintf("%v %s %q %#v %x %d %+v", s, s, s, s, s, s, s) + buf.String() + string(j)
	if strings.Contains(out, "ss:w") || strings.Count(out, "[redacted]") < 9 {
		t.Errorf("secret printed: %s", out)
	}
}

func TestReadSecret(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/pw", []byte("from-file\r\n"), 0o600)
	os.WriteFile(dir+"/empty", []byte("\n"), 0o600)
	t.Setenv("RW_T_PW", "from-env")
	cases := []struct {
		in   mssql.Instance
		want string
		err  string
	}{
		{mssql.Instance{PasswordEnv: "RW_T_PW"}, "from-env", ""},
		{mssql.Instance{PasswordEnv: "RW_T_UNSET"}, "", "password_env RW_T_UNSET is not set"},
		{mssql.Instance{PasswordFile: dir + "/pw"}, "from-file", ""},
		{mssql.Instance{PasswordFile: dir + "/empty"}, "", "is empty"},
		{mssql.Instance{PasswordFile: dir + "/none"}, "", "no such file"},
	}
	for _, tc := range cases {
		got, err := mssql.ReadSecret(&tc.in)
		if got != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%+v: %q, %v", tc.in, got, err)
		}
	}
}

// A refused connection's error names the instance's address, not its secret.
func TestConnectErrorHoldsNoSecret(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	ln.Close() // nothing listens there now
	t.Setenv("RW_T_PW", hostile)
	_, err = mssql.Connect(context.Background(), mssql.Instance{Name: "X", Host: "127.0.0.1", Port: addr.Port, Auth: "sql",
		User: "rw", PasswordEnv: "RW_T_PW", Encrypt: "disable"}, 2*time.Second)
	var e *mssql.Error
	if err == nil || !errorsAs(err, &e) || e.Kind != mssql.KindNetwork || !e.Fatal() {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(err.Error(), "ss:w") {
		t.Errorf("error holds the password: %v", err)
	}
}

func errorsAs(err error, e **mssql.Error) bool {
	x, ok := err.(*mssql.Error)
	*e = x
	return ok
}

func TestEveryQueryResolvesForEveryVersion(t *testing.T) {
	names := map[string]bool{}
	for _, n := range mssql.SectionNames() {
		names[n] = true
	}
	for _, want := range []string{"restore_history/check", "restore_history/rows", "errorlog/archives", "errorlog/read",
		"agent_history/check", "agent_history/rows", "host/properties", "host/sysinfo", "host/os", "host/services",
		"host/config", "host/traceflags", "host/modules", "host/volumes", "inflight", "cms"} {
		if !names[want] {
			t.Errorf("no query %s", want)
		}
		for major := 0; major <= 17; major++ {
			if major > 0 && major < 10 {
				continue
			}
			q := mssql.Query(want, major)
			if mssql.QueryName(q) != want {
				t.Errorf("%s for %d starts %q", want, major, q[:min(len(q), 40)])
			}
			if strings.Contains(q, "restorewatch:since") {
				t.Errorf("%s for %d: gate left in the text", want, major)
			}
		}
	}
	if q := mssql.Query("restore_history/rows", 11); strings.Contains(q, "bs.key_algorithm") || !strings.Contains(q, "CONVERT(nvarchar(32), NULL) AS key_algorithm,") {
		t.Errorf("2012 history query reads key_algorithm:\n%s", q)
	}
	if q := mssql.Query("restore_history/rows", 16); !strings.Contains(q, "    bs.key_algorithm,\n") {
		t.Errorf("2022 history query lost key_algorithm:\n%s", q)
	}
	if q := mssql.Query("host/os", 13); !strings.Contains(q, "dm_os_windows_info") {
		t.Errorf("2016 host/os query: %s", q)
	}
	if q := mssql.Query("host/os", 15); !strings.Contains(q, "dm_os_host_info") {
		t.Errorf("2019 host/os query: %s", q)
	}
	if q := mssql.Query("host/sysinfo", 10); strings.Contains(q, "i.physical_memory_kb") || !strings.Contains(q, "physical_memory_in_bytes") {
		t.Errorf("2008 R2 sysinfo query:\n%s", q)
	}
	if !strings.Contains(mssql.PermissionsSQL, "GRANT VIEW SERVER STATE") || strings.Contains(mssql.PermissionsSQL, "sysadmin ADD") {
		t.Error("permissions.sql")
	}
}

func TestParseServerName(t *testing.T) {
	for in, want := range map[string]string{
		"SQL01":               "SQL01||0",
		`SQL01\REPORTING`:     `SQL01|REPORTING|0`,
		"SQL01,1533":          "SQL01||1533",
		"tcp:SQL01.corp,1533": "SQL01.corp||1533",
		`SQL01\INST,1533`:     "SQL01||1533",
		`(local)\DEV`:         "localhost|DEV|0",
	} {
		h, i, p := mssql.ParseServerName(in)
		if got := fmt.Sprintf("%s|%s|%d", h, i, p); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

func TestRestoredDatabaseAndRedaction(t *testing.T) {
	for stmt, want := range map[string]string{
		"RESTORE DATABASE [Sales DB] FROM DISK = N'x'":           "Sales DB",
		"restore log Sales from disk = 'x' with norecovery":      "Sales",
		"-- nightly\nRESTORE DATABASE \"Q\"\"A\" FROM URL = 'x'": `Q"A`,
		"/* c */ RESTORE DATABASE [a]]b] FROM DISK='x'":          "a]b",
		"RESTORE DATABASE @db FROM DISK = @file":                 "",
	} {
		if got := mssql.RestoredDatabase(stmt); got != want {
			t.Errorf("%q: %q, want %q", stmt, got, want)
		}
	}
	got := mssql.RedactStatement("RESTORE DATABASE a FROM DISK='x' WITH PASSWORD = N'it''s', MEDIAPASSWORD='m2'")
	if strings.Contains(got, "it''s") || strings.Contains(got, "m2") || strings.Count(got, "[redacted]") != 2 {
		t.Errorf("redacted: %s", got)
	}
}

func TestAgentTimes(t *testing.T) {
	if got := mssql.AgentDuration(13502); got != 3600+35*60+2 {
		t.Errorf("13502 = %d s", got)
	}
	if got := mssql.AgentDuration(1000000); got != 100*3600 {
		t.Errorf("1000000 = %d s, want 100 h", got)
	}
	if at, ok := mssql.AgentTime(20240318, 93005); !ok || at != time.Date(2024, 3, 18, 9, 30, 5, 0, time.UTC) {
		t.Errorf("20240318 93005 = %v %v", at, ok)
	}
	if _, ok := mssql.AgentTime(20240231, 0); ok {
		t.Error("31 February accepted")
	}
}

func TestAnyTimeAndBanner(t *testing.T) {
	want := time.Date(2000, 4, 5, 20, 0, 0, 0, time.UTC)
	for _, v := range []any{"04/05/2000  20:00", []byte("2000-04-05 20:00:00.000"), want} {
		if got := mssql.AnyTime(v); !got.Equal(want) {
			t.Errorf("%v: %v", v, got)
		}
	}
	snap := &store.HostSnapshot{}
	extra := map[string]string{}
	mssql.FromBanner(snap, "Microsoft SQL Server 2016 (SP1-CU8) (KB4077064) - 13.0.4474.0 (X64) \n\tFeb 24 2018 13:53:14 \n\tCopyright (c) Microsoft Corporation\n\tStandard Edition (64-bit) on Windows Server 2012 R2 Datacenter 6.3 <X64> (Build 9600: ) (Hypervisor)\n", extra)
	if snap.Level != "SP1" || snap.UpdateLevel != "CU8" || snap.UpdateRef != "KB4077064" || snap.OS != "Windows Server 2012 R2 Datacenter 6.3 (Build 9600)" ||
		snap.Hypervisor == nil || !*snap.Hypervisor || extra["product"] != "Microsoft SQL Server 2016" {
		t.Errorf("banner: %+v %v", snap, extra)
	}
}
