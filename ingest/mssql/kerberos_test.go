package mssql_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/ingest/mssql/kdctest"
	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
)

// The SQL Server's SPN. The name is under .test (RFC 2606), so the
// driver's CNAME lookup of it fails at once and leaves it as written.
const (
	testSPN  = "MSSQLSvc/sql01.rw.test:1433"
	otherSPN = "MSSQLSvc/sql02.rw.test:1433"
)

// kerberosRealm starts a KDC (its clock moved by skew) with the
// collector's account, the SQL Server's SPN and another server's, and a
// TDS server holding only its own SPN's key, encrypted to a test CA. It
// returns the collector's instance, logging in with a keytab.
func kerberosRealm(t *testing.T, skew time.Duration) (mssql.Instance, *tdstest.Server, *kdctest.KDC) {
	t.Helper()
	kdc := kdctest.Start(t, "RW.TEST", skew)
	kdc.AddPrincipal("svc_restorewatch")
	kdc.AddPrincipal(testSPN)
	kdc.AddPrincipal(otherSPN)
	clientKT := kdc.Keytab("restorewatch.keytab", "svc_restorewatch")
	serviceKT, err := os.ReadFile(kdc.Keytab("sqlserver.keytab", testSPN))
	if err != nil {
		t.Fatal(err)
	}
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
	srv := tdstest.New(tdstest.Config{TLS: tc, Logf: t.Logf,
		Kerberos: &tdstest.Kerberos{Keytab: serviceKT, Logins: []string{"svc_restorewatch@RW.TEST"}}})
	addr, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return mssql.Instance{Name: "SQL01", Host: "127.0.0.1", Port: port(t, addr), Auth: "windows",
		User: "svc_restorewatch@RW.TEST", Keytab: clientKT, Krb5Conf: kdc.Krb5Conf, SPN: testSPN, Certificate: caFile}, srv, kdc
}

func connectKerberos(t *testing.T, in mssql.Instance) (*mssql.Session, error) {
	t.Helper()
	cfg := mssql.Config{Instances: []mssql.Instance{in}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := mssql.Connect(ctx, cfg.Instances[0], 10*time.Second)
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, err
}

func TestKerberosKeytabLogin(t *testing.T) {
	in, srv, _ := kerberosRealm(t, 0)
	// Connect logs in and pings (the driver's "select 1;").
	if _, err := connectKerberos(t, in); err != nil {
		t.Fatalf("Kerberos login: %v", err)
	}
	var kerberos []tdstest.Login
	for _, l := range srv.Logins() {
		if l.Auth == tdstest.AuthKerberos {
			kerberos = append(kerberos, l)
		}
	}
	if len(kerberos) != 1 || kerberos[0].User != "svc_restorewatch@RW.TEST" || kerberos[0].Refused != "" || kerberos[0].Encryption == tdstest.Unencrypted {
		t.Errorf("logins %+v, want one encrypted Kerberos login of svc_restorewatch@RW.TEST", srv.Logins())
	}
}

// A credential cache that kinit (or k5start) keeps, as on a host joined
// to the domain with sssd or realmd: no user or keytab in the file.
func TestKerberosCredentialCacheLogin(t *testing.T) {
	kdctest.Need(t, "kinit")
	in, srv, _ := kerberosRealm(t, 0)
	cc := filepath.Join(t.TempDir(), "krb5cc_rw")
	kinit := exec.Command("kinit", "-k", "-t", in.Keytab, "-c", "FILE:"+cc, in.User)
	kinit.Env = append(os.Environ(), "KRB5_CONFIG="+in.Krb5Conf)
	if out, err := kinit.CombinedOutput(); err != nil {
		t.Fatalf("kinit: %v\n%s", err, out)
	}
	in.User, in.Keytab = "", ""
	t.Setenv("KRB5CCNAME", "FILE:"+cc)
	if _, err := connectKerberos(t, in); err != nil {
		t.Fatalf("Kerberos login from KRB5CCNAME: %v", err)
	}
	if l := srv.Logins(); len(l) != 1 || l[0].User != "svc_restorewatch@RW.TEST" {
		t.Errorf("logins %+v", l)
	}
}

// A domain account with a password where NTLM is switched off: realm (or
// krb5_conf) beside user and password makes the login Kerberos.
func TestKerberosPasswordLogin(t *testing.T) {
	in, srv, kdc := kerberosRealm(t, 0)
	kdc.SetPassword("svc_restorewatch", "Kerb-Pw_4711")
	t.Setenv("RW_T_KRB_PW", "Kerb-Pw_4711")
	in.Keytab, in.User, in.Realm, in.PasswordEnv = "", "svc_restorewatch", "RW.TEST", "RW_T_KRB_PW"
	if _, err := connectKerberos(t, in); err != nil {
		t.Fatalf("Kerberos login with a password: %v", err)
	}
	if l := srv.Logins(); len(l) != 1 || l[0].Auth != tdstest.AuthKerberos || l[0].User != "svc_restorewatch@RW.TEST" {
		t.Errorf("logins %+v", l)
	}
	t.Setenv("RW_T_KRB_PW", "wrong")
	_, err := connectKerberos(t, in)
	if err == nil || !strings.Contains(err.Error(), "is not the account's current one") || strings.Contains(err.Error(), "Kerb-Pw") {
		t.Errorf("a wrong password: %v", err)
	}
}

func TestKerberosRefusals(t *testing.T) {
	in, srv, _ := kerberosRealm(t, 0)
	cases := []struct {
		name string
		mod  func(*mssql.Instance)
		want []string
	}{
		{"SPN nobody registered", func(in *mssql.Instance) { in.SPN = "MSSQLSvc/sql09.rw.test:1433" },
			[]string{"the KDC knows no service principal MSSQLSvc/sql09.rw.test:1433", "setspn -S"}},
		{"SPN of another server", func(in *mssql.Instance) { in.SPN = otherSPN },
			[]string{"18452", "the SPN asked for (spn) must be registered to the account SQL Server runs as"}},
		{"principal the KDC does not know", func(in *mssql.Instance) { in.User = "nobody@RW.TEST" },
			[]string{"the KDC knows no principal nobody@RW.TEST", "check user and realm"}},
		{"no keytab", func(in *mssql.Instance) { in.Keytab = filepath.Join(t.TempDir(), "missing.keytab") },
			[]string{"keytab", "does not exist"}},
		{"integrated without a credential cache", func(in *mssql.Instance) {
			in.User, in.Keytab, in.CredentialCache = "", "", filepath.Join(t.TempDir(), "krb5cc_none")
		}, []string{"credential cache", "does not exist: run kinit"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			try := in
			tc.mod(&try)
			_, err := connectKerberos(t, try)
			if err == nil {
				t.Fatal("logged in")
			}
			t.Logf("refused as: %v", err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	for _, l := range srv.Logins() {
		if l.User == "svc_restorewatch@RW.TEST" && l.Refused != "" && !strings.Contains(l.Refused, otherSPN) {
			t.Errorf("the server refused %+v, want the reason to name the ticket's SPN %s", l, otherSPN)
		}
	}
}

// A KDC whose clock is an hour ahead, as a domain controller when the
// collector's machine has lost its time source: the KDC refuses the
// pre-authentication timestamp and the error says to synchronise.
func TestKerberosClockSkew(t *testing.T) {
	in, srv, _ := kerberosRealm(t, time.Hour)
	_, err := connectKerberos(t, in)
	if err == nil {
		t.Fatal("logged in with the KDC's clock an hour ahead")
	}
	t.Logf("refused as: %v", err)
	for _, w := range []string{"clock", "synchronise", "KRB_AP_ERR_SKEW"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	var e *mssql.Error
	if !errors.As(err, &e) || e.Kind != mssql.KindLogin {
		t.Errorf("error %#v, want a login failure", err)
	}
	if n := len(srv.Logins()); n != 0 {
		t.Errorf("%d logins reached the server; the KDC should have refused first", n)
	}
}

// The account's key changed after the keytab was exported (a gMSA's
// password rotates every 30 days): the KDC refuses the old key, and the
// error says to export the keytab again.
func TestKerberosStaleKeytab(t *testing.T) {
	in, _, kdc := kerberosRealm(t, 0)
	kdc.Keytab("rotated.keytab", "svc_restorewatch") // ktadd gives the account a new key
	_, err := connectKerberos(t, in)
	if err == nil {
		t.Fatal("logged in with the old key")
	}
	t.Logf("refused as: %v", err)
	if !strings.Contains(err.Error(), "is not the account's current one") {
		t.Errorf("error %q does not say the keytab is stale", err)
	}
}
