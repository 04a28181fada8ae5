package mssql_test

import (
	"runtime"
	"testing"

	"github.com/microsoft/go-mssqldb/msdsn"
	"github.com/restorewatch/restorewatch/ingest/mssql"
)

// Each Windows and Entra ID method reaches go-mssqldb as the DSN keys its
// authenticator reads.
func TestDSNAuthentication(t *testing.T) {
	t.Setenv("KRB5CCNAME", "FILE:/tmp/krb5cc_rw")
	t.Setenv("KRB5_CONFIG", "")
	cases := []struct {
		name     string
		in       mssql.Instance
		user     string
		password bool
		params   map[string]string
	}{
		{"keytab", mssql.Instance{Auth: "windows", User: "svc_rw@CORP.EXAMPLE", Keytab: "/etc/rw.keytab", SPN: "MSSQLSvc/sql01.corp.example:1433"},
			"svc_rw@CORP.EXAMPLE", false, map[string]string{"authenticator": "krb5", "krb5-keytabfile": "/etc/rw.keytab",
				"krb5-configfile": "/etc/krb5.conf", "serverspn": "MSSQLSvc/sql01.corp.example:1433"}},
		{"credential cache", mssql.Instance{Auth: "windows", CredentialCache: "/var/lib/rw/cc", Krb5Conf: "/etc/rw/krb5.conf", Realm: "CORP.EXAMPLE"},
			"", false, map[string]string{"authenticator": "krb5", "krb5-credcachefile": "/var/lib/rw/cc", "krb5-configfile": "/etc/rw/krb5.conf", "krb5-realm": "CORP.EXAMPLE"}},
		{"ntlm with a password", mssql.Instance{Auth: "windows", User: `CORP\svc_rw`},
			`CORP\svc_rw`, true, map[string]string{"authenticator": ""}},
		{"kerberos with a password", mssql.Instance{Auth: "windows", User: "svc_rw", Realm: "CORP.EXAMPLE"},
			"svc_rw", true, map[string]string{"authenticator": "krb5", "krb5-realm": "CORP.EXAMPLE", "krb5-keytabfile": "", "krb5-credcachefile": ""}},
		{"service principal", mssql.Instance{Auth: "entra", Entra: "service_principal", User: "app-id", Tenant: "tenant-id"},
			"app-id@tenant-id", true, map[string]string{"fedauth": "ActiveDirectoryServicePrincipal"}},
		{"service principal certificate", mssql.Instance{Auth: "entra", Entra: "service_principal", User: "app-id", ClientCertificate: "/etc/rw/sp.pem"},
			"app-id", true, map[string]string{"fedauth": "ActiveDirectoryServicePrincipal", "clientcertpath": "/etc/rw/sp.pem"}},
		{"managed identity", mssql.Instance{Auth: "entra", Entra: "managed_identity"},
			"", false, map[string]string{"fedauth": "ActiveDirectoryManagedIdentity"}},
		{"default chain", mssql.Instance{Auth: "entra", Entra: "default"},
			"", false, map[string]string{"fedauth": "ActiveDirectoryDefault"}},
		{"static token", mssql.Instance{Auth: "entra", Entra: "token"},
			"", false, map[string]string{"fedauth": ""}},
	}
	if runtime.GOOS != "windows" {
		cases = append(cases, struct {
			name     string
			in       mssql.Instance
			user     string
			password bool
			params   map[string]string
		}{"integrated from KRB5CCNAME", mssql.Instance{Auth: "windows"}, "", false,
			map[string]string{"authenticator": "krb5", "krb5-credcachefile": "/tmp/krb5cc_rw"}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Host, tc.in.Port = "sql01.corp.example", 1433
			p, err := msdsn.Parse(mssql.BuildDSN(&tc.in, "s3cret"))
			if err != nil {
				t.Fatal(err)
			}
			if p.User != tc.user || (p.Password == "s3cret") != tc.password {
				t.Errorf("user %q password given %v, want %q %v", p.User, p.Password != "", tc.user, tc.password)
			}
			for k, want := range tc.params {
				if got := p.Parameters[k]; got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
		})
	}
}

func TestCredentialCacheMustBeAFile(t *testing.T) {
	t.Setenv("KRB5CCNAME", "KEYRING:persistent:1000")
	in := mssql.Instance{Host: "h", Auth: "windows", Realm: "CORP.EXAMPLE"}
	if _, err := mssql.BuildAuthDSN(&in, ""); err == nil {
		t.Fatal("a KEYRING cache was accepted")
	}
}

func TestSPNDefault(t *testing.T) {
	for _, tc := range []struct {
		in   mssql.Instance
		want string
	}{
		{mssql.Instance{Host: "sql01.corp.example"}, "MSSQLSvc/sql01.corp.example:1433"},
		{mssql.Instance{Host: "sql01.corp.example", Port: 14330}, "MSSQLSvc/sql01.corp.example:14330"},
		{mssql.Instance{Host: "sql01.corp.example", InstanceName: "HR"}, "MSSQLSvc/sql01.corp.example:HR"},
		{mssql.Instance{Host: "10.0.0.5", SPN: "MSSQLSvc/sql01.corp.example:1433"}, "MSSQLSvc/sql01.corp.example:1433"},
	} {
		if got := tc.in.SPNFor(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.in, got, tc.want)
		}
	}
}
