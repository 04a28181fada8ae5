package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql"
)

const specExample = `
[collector]
interval = "15m"        # between passes
timeout = "30s"         # per instance and pass
concurrency = 16

[[instance]]
name = "RPT-SQL01"      # the name restorewatch shows
host = "rpt-sql01.corp.example"
port = 1433             # or: instance = "REPORTING"
auth = "sql"            # sql | windows | entra
user = "restorewatch"
password_env = "RW_RPT_SQL01_PW"   # or: password_file = "/run/secrets/rw"
encrypt = "true"        # go-mssqldb's encrypt setting
tags = { env = "prod", team = "billing", rto = "4h" }
`

func TestParseConfigSpecExample(t *testing.T) {
	cfg, err := parseConfig([]byte(specExample + `
[[instance]]
host = "hr-sql02"
instance = "HR"
auth = "windows"

[cms]
host = "cms01"
user = "restorewatch"
password_file = "/run/secrets/rw"
group = "Production"
tags = { env = "prod" }
`))
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Collector
	if c.Interval != 15*time.Minute || c.Timeout != 30*time.Second || c.Concurrency != 16 ||
		c.InflightInterval != mssql.DefaultInflightInterval || c.Jitter == nil || *c.Jitter != mssql.DefaultJitter {
		t.Errorf("collector settings %+v", c)
	}
	in := cfg.Instances[0]
	if in.Name != "RPT-SQL01" || in.Port != 1433 || in.Auth != "sql" || in.PasswordEnv != "RW_RPT_SQL01_PW" ||
		in.Encrypt != "true" || in.Tags["rto"] != "4h" || in.Tags["team"] != "billing" {
		t.Errorf("instance %+v", in)
	}
	if hr := cfg.Instances[1]; hr.Name != `hr-sql02\HR` || hr.Auth != "windows" {
		t.Errorf("a name defaults to host\\instance: %+v", hr)
	}
	if cfg.CMS == nil || cfg.CMS.Host != "cms01" || cfg.CMS.Group != "Production" || cfg.CMS.Auth != "sql" || cfg.CMS.Name != "cms:cms01" {
		t.Errorf("cms %+v", cfg.CMS)
	}
}

func TestParseConfigErrors(t *testing.T) {
	inst := func(body string) string { return "[[instance]]\nname = \"X1\"\n" + body }
	cases := []struct{ name, toml, want string }{
		{"missing host", inst(`user = "u"` + "\npassword_env = \"E\""), `instance "X1": host is missing`},
		{"port and instance", inst("host = \"h\"\nport = 1433\ninstance = \"I\"\nuser = \"u\"\npassword_env = \"E\""), `instance "X1": give port or instance, not both`},
		{"unknown auth", inst("host = \"h\"\nauth = \"kerberos\""), `instance "X1": unknown auth "kerberos"`},
		{"sql without secret", inst("host = \"h\"\nuser = \"u\""), `instance "X1": auth = "sql" needs password_env or password_file`},
		{"sql without user", inst("host = \"h\"\npassword_env = \"E\""), `instance "X1": auth = "sql" needs user`},
		{"two secrets", inst("host = \"h\"\nuser = \"u\"\npassword_env = \"E\"\npassword_file = \"f\""), `give password_env or password_file, not both`},
		{"windows user without secret", inst("host = \"h\"\nauth = \"windows\"\nuser = \"D\\\\u\""), `auth = "windows" with user needs keytab (Kerberos) or password_env/password_file`},
		{"keytab without user", inst("host = \"h\"\nauth = \"windows\"\nkeytab = \"/k\""), `keytab needs user`},
		{"keytab and password", inst("host = \"h\"\nauth = \"windows\"\nuser = \"u@R\"\nkeytab = \"/k\"\npassword_env = \"E\""), `keytab replaces the password`},
		{"keytab and cache", inst("host = \"h\"\nauth = \"windows\"\nuser = \"u@R\"\nkeytab = \"/k\"\ncredential_cache = \"/c\""), `give keytab or credential_cache, not both`},
		{"bad spn", inst("host = \"h\"\nauth = \"windows\"\nspn = \"h:1433\""), `spn "h:1433": want service/host[:port]`},
		{"keytab with sql", inst("host = \"h\"\nuser = \"u\"\npassword_env = \"E\"\nkeytab = \"/k\""), `go with auth = "windows", not "sql"`},
		{"entra key with sql", inst("host = \"h\"\nuser = \"u\"\npassword_env = \"E\"\nentra = \"default\""), `go with auth = "entra", not "sql"`},
		{"unknown entra", inst("host = \"h\"\nauth = \"entra\"\nentra = \"magic\""), `unknown entra "magic"`},
		{"service principal without client id", inst("host = \"h\"\nauth = \"entra\"\nentra = \"service_principal\"\npassword_env = \"E\""), `needs user: the application (client) id`},
		{"service principal without secret", inst("host = \"h\"\nauth = \"entra\"\nentra = \"service_principal\"\nuser = \"app\""), `needs a client secret`},
		{"managed identity with a secret", inst("host = \"h\"\nauth = \"entra\"\nentra = \"managed_identity\"\npassword_env = \"E\""), `takes no secret`},
		{"entra without token", inst("host = \"h\"\nauth = \"entra\""), `auth = "entra" needs entra = "service_principal", "managed_identity" or "default"`},
		{"typo in a key", inst("host = \"h\"\nuser = \"u\"\npasword_env = \"E\""), `unknown key(s): instance.pasword_env`},
		{"integer duration", "[collector]\ntimeout = 30\n" + inst("host = \"h\"\nuser = \"u\"\npassword_env = \"E\""), `timeout = 30ns is under a second`},
		{"bad encrypt", inst("host = \"h\"\nuser = \"u\"\npassword_env = \"E\"\nencrypt = \"yes please\""), `encrypt "yes please"`},
		{"strict trusting any certificate", inst("host = \"h\"\nuser = \"u\"\npassword_env = \"E\"\nencrypt = \"strict\"\ntrust_server_certificate = true"), `encrypt = "strict" always validates the certificate`},
		{"certificate not pem or der", inst("host = \"h\"\nuser = \"u\"\npassword_env = \"E\"\ncertificate = \"/etc/ssl/ca.crt\""), `certificate "/etc/ssl/ca.crt": want a .pem or .der file`},
		{"disable with a certificate", inst("host = \"h\"\nuser = \"u\"\npassword_env = \"E\"\nencrypt = \"disable\"\ncertificate = \"/etc/ssl/ca.pem\""), `encrypt = "disable" uses no TLS`},
		{"bad rto", inst("host = \"h\"\nuser = \"u\"\npassword_env = \"E\"\ntags = { rto = \"soon\" }"), `tags.rto "soon"`},
		{"duplicate name", inst("host = \"h\"\nuser = \"u\"\npassword_env = \"E\"") + "\n" + inst("host = \"h2\"\nuser = \"u\"\npassword_env = \"E\""), `instance "X1": name appears twice`},
		{"nothing to collect", "[collector]\ninterval = \"5m\"\n", "nothing to collect"},
		{"negative concurrency", "[collector]\nconcurrency = -1\n" + inst("host = \"h\"\nuser = \"u\"\npassword_env = \"E\""), "concurrency must be positive"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig([]byte(tc.toml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestLoadConfigLeavesUnsetSecretToConnectTime(t *testing.T) {
	path := t.TempDir() + "/rw.toml"
	if err := os.WriteFile(path, []byte(specExample), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Unsetenv("RW_RPT_SQL01_PW")
	if _, err := loadConfig(path); err != nil {
		t.Errorf("an unset password_env failed the whole configuration: %v", err)
	}
	if _, err := loadConfig(path + ".missing"); err == nil || !strings.Contains(err.Error(), "rw.toml.missing") {
		t.Errorf("missing file: %v", err)
	}
}

func TestParseConfigEncryption(t *testing.T) {
	inst := func(body string) string {
		return "[[instance]]\nname = \"X1\"\nhost = \"h\"\nuser = \"u\"\npassword_env = \"E\"\n" + body
	}
	cases := []struct {
		body, encrypt, insecure string // insecure: a word of the warning; "" = none
	}{
		{"", "", ""},
		{`encrypt = "strict"`, "strict", ""},
		{`encrypt = "TRUE"`, "true", ""},
		{`encrypt = "mandatory"`, "true", ""},
		{`encrypt = "true"` + "\ncertificate = \"/etc/ssl/corp-ca.pem\"\nhost_name_in_certificate = \"sql01.corp.example\"", "true", ""},
		{`encrypt = "false"`, "false", "only the login is encrypted"},
		{`encrypt = "optional"`, "false", "only the login is encrypted"},
		{`encrypt = "disable"`, "disable", "cross the network unencrypted"},
		{"trust_server_certificate = true", "", "not checked"},
	}
	for _, tc := range cases {
		cfg, err := parseConfig([]byte(inst(tc.body)))
		if err != nil {
			t.Errorf("%q: %v", tc.body, err)
			continue
		}
		in := cfg.Instances[0]
		if in.Encrypt != tc.encrypt {
			t.Errorf("%q: encrypt %q, want %q", tc.body, in.Encrypt, tc.encrypt)
		}
		w := in.Insecure()
		if (tc.insecure == "") != (w == "") || !strings.Contains(w, tc.insecure) || (w != "" && !strings.HasPrefix(w, mssql.InsecureNote)) {
			t.Errorf("%q: warning %q, want one with %q", tc.body, w, tc.insecure)
		}
		if strings.Contains(tc.body, "host_name_in_certificate") && (in.HostNameInCertificate != "sql01.corp.example" || in.Certificate != "/etc/ssl/corp-ca.pem") {
			t.Errorf("%q: %+v", tc.body, in)
		}
	}
}
