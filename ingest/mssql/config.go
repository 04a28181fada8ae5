// Package mssql reads restore facts from live SQL Server instances over
// github.com/microsoft/go-mssqldb: msdb restore history, the error log
// through xp_readerrorlog, SQL Agent job history, a host snapshot and the
// restores in flight. Each source's T-SQL lives in an embedded .sql file
// that a DBA can read and paste into SSMS; permissions.sql creates the
// minimal login. The scheduling (timeouts, concurrency, watermarks, run
// records) lives in ingest/collector.
package mssql

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Config is what the collector is told to collect (SPEC §6.2): the
// scheduling, the instances, a CMS and the retention. The TOML file it
// comes from is the command's business (cmd/restorewatch/config.go).
type Config struct {
	Collector Collector
	Instances []Instance
	// CMS, when set, adds the instances registered on a Central Management
	// Server to Instances each time the collector starts.
	CMS *CMS
	// Retention says how long the warehouse keeps records; zero keeps them.
	Retention Retention
}

// Retention is the [retention] table, in days (TOML has no day unit and Go's
// durations stop at hours). Zero keeps records for ever; restore history is
// the product's memory, so it has no default.
type Retention struct {
	RestoreDays  int
	RunDays      int // collector run records
	InflightDays int // progress curves of restores in flight
}

// Collector holds the scheduling settings.
type Collector struct {
	Interval time.Duration // between passes; default 15m
	Timeout  time.Duration // per instance and pass; default 30s
	// Concurrency caps the instances queried at once; default 16.
	Concurrency int
	// InflightInterval is the sampling period of restores in flight; default 10s.
	InflightInterval time.Duration
	// Jitter spreads the first passes of continuous mode over [0, Jitter);
	// default 30s, "0s" disables it.
	Jitter *time.Duration
	// Retry is how soon continuous mode tries again an instance whose pass
	// could not reach it; it doubles on each failure up to Interval.
	// Default 30s.
	Retry time.Duration
}

// Instance is one SQL Server instance to collect from.
type Instance struct {
	Name         string // the name restorewatch shows
	Host         string
	Port         int
	InstanceName string // named instance, resolved through SQL Browser
	Auth         string // sql (default) | windows | entra
	User         string
	// PasswordEnv and PasswordFile name where the password (an access
	// token for entra) is read at connect time. The value itself never
	// enters the configuration.
	PasswordEnv  string
	PasswordFile string
	// Encrypt is go-mssqldb's encrypt setting. Unset, the login is
	// encrypted to a validated certificate: TDS 8 ("strict") where the
	// server speaks it (SQL Server 2022+), else TDS 7.x TLS ("true").
	// "false" (alias "optional") and "disable" must be written and leave a
	// warning on every pass; "mandatory" is an alias of "true".
	Encrypt string
	// TrustServerCertificate accepts any certificate (a warning on every
	// pass); it cannot be combined with encrypt = "strict".
	TrustServerCertificate bool
	// Certificate is a CA certificate file (.pem or .der) that the
	// server's certificate must chain to, for CAs not in the system pool.
	Certificate string
	// HostNameInCertificate is the name the server's certificate must
	// carry when it differs from Host (an alias, an IP address, a
	// listener name).
	HostNameInCertificate string
	Tags                  map[string]string // env, team, rto

	// Kerberos settings of auth = "windows" (see auth.go). Keytab or
	// CredentialCache log in through Kerberos from any platform; with
	// neither, Windows uses SSPI with the service's own identity and other
	// systems the credential cache KRB5CCNAME names.
	Keytab          string // a keytab holding User's keys (a gMSA's, a service account's)
	CredentialCache string // a FILE: credential cache kept fresh by kinit or k5start
	Krb5Conf        string // krb5.conf; default KRB5_CONFIG, else /etc/krb5.conf
	Realm           string // default: User's @REALM, else krb5.conf's default_realm
	// SPN is the server's service principal name; default
	// MSSQLSvc/host:port (MSSQLSvc/host:instance for a named instance).
	SPN string

	// Entra ID settings of auth = "entra" (see auth.go).
	Entra             string // token | service_principal | managed_identity | default
	Tenant            string // the directory (tenant) id of a service principal
	ClientCertificate string // a service principal's certificate (PEM with its key, or PFX)
}

// CMS names a Central Management Server and the group whose registered
// servers (subgroups included) are collected. The listed instances use the
// CMS's own auth, user, secret, encryption and tags settings; an [[instance]]
// of the same name overrides its CMS entry.
type CMS struct {
	Instance
	Group string // "Production/Billing"; empty = every group
}

// Defaults.
const (
	DefaultInterval         = store.DefaultCollectorInterval
	DefaultTimeout          = 30 * time.Second
	DefaultConcurrency      = 16
	DefaultInflightInterval = 10 * time.Second
	DefaultJitter           = 30 * time.Second
	DefaultRetry            = 30 * time.Second
)

// Validate fills in the defaults and checks the configuration: the
// collector settings, every instance (the error names it and the key at
// fault) and the CMS. cmd reads the TOML file (cmd/restorewatch/config.go)
// into these types and calls it.
func (c *Config) Validate() error {
	if r := c.Retention; r.RestoreDays < 0 || r.RunDays < 0 || r.InflightDays < 0 {
		return fmt.Errorf("config: [retention]: days cannot be negative")
	}
	cc := &c.Collector
	for _, d := range []struct {
		key string
		v   *time.Duration
		def time.Duration
	}{{"interval", &cc.Interval, DefaultInterval}, {"timeout", &cc.Timeout, DefaultTimeout},
		{"inflight_interval", &cc.InflightInterval, DefaultInflightInterval}, {"retry", &cc.Retry, DefaultRetry}} {
		switch {
		case *d.v == 0:
			*d.v = d.def
		case *d.v < time.Second:
			// BurntSushi/toml reads a bare integer as nanoseconds.
			return fmt.Errorf("[collector] %s = %v is under a second: write durations as strings such as \"30s\"", d.key, *d.v)
		}
	}
	if cc.Concurrency == 0 {
		cc.Concurrency = DefaultConcurrency
	}
	if cc.Concurrency < 0 {
		return fmt.Errorf("[collector] concurrency must be positive, not %d", cc.Concurrency)
	}
	if cc.Jitter == nil {
		j := DefaultJitter
		cc.Jitter = &j
	}
	if len(c.Instances) == 0 && c.CMS == nil {
		return errors.New("no [[instance]] and no cms: nothing to collect")
	}
	seen := map[string]bool{}
	var errs []error
	for i := range c.Instances {
		in := &c.Instances[i]
		if err := in.validate(); err != nil {
			if in.Name == "" {
				err = fmt.Errorf("[[instance]] #%d: %w", i+1, err)
			}
			errs = append(errs, err)
			continue
		}
		key := strings.ToLower(in.Name)
		if seen[key] {
			errs = append(errs, fmt.Errorf("instance %q: name appears twice", in.Name))
		}
		seen[key] = true
	}
	if c.CMS != nil {
		if c.CMS.Name == "" {
			c.CMS.Name = "cms:" + c.CMS.Host
		}
		if err := c.CMS.Instance.validate(); err != nil {
			errs = append(errs, fmt.Errorf("cms: %w", err))
		}
	}
	return errors.Join(errs...)
}

// validate checks one instance; the error names it and the key at fault.
// A password_env that is not set is not checked here: the secret is read
// at connect time, and only that instance fails.
func (in *Instance) validate() error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("instance %q: "+format, append([]any{in.Name}, args...)...)
	}
	in.Name = strings.TrimSpace(in.Name)
	in.Host = strings.TrimSpace(in.Host)
	if in.Name == "" {
		if in.Host == "" {
			return errors.New("name and host are missing")
		}
		in.Name = in.Host
		if in.InstanceName != "" {
			in.Name += `\` + in.InstanceName
		}
	}
	switch {
	case in.Host == "":
		return fail("host is missing")
	case in.Port != 0 && in.InstanceName != "":
		return fail("give port or instance, not both")
	case in.Port < 0 || in.Port > 65535:
		return fail("port %d is out of range", in.Port)
	case in.PasswordEnv != "" && in.PasswordFile != "":
		return fail("give password_env or password_file, not both")
	}
	in.Auth = strings.ToLower(strings.TrimSpace(in.Auth))
	if in.Auth == "" {
		in.Auth = "sql"
	}
	if err := in.validateAuth(); err != nil {
		return fail("%w", err)
	}
	if err := in.validateTLS(); err != nil {
		return fail("%w", err)
	}
	for k := range in.Tags {
		switch k {
		case "rto":
			if _, err := time.ParseDuration(in.Tags[k]); err != nil {
				return fail("tags.rto %q is not a duration such as \"4h\"", in.Tags[k])
			}
		case "":
			return fail("empty tag name")
		}
	}
	return nil
}
