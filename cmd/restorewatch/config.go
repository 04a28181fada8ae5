package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/restorewatch/restorewatch/ingest/mssql"
)

// The collector's TOML file (README "Configuration", SPEC §6.2), read by
// collect and serve --config. The file's shape lives here, with the
// command that reads it; ingest/mssql keeps what the collector is told.

type configFile struct {
	Collector collectorFile  `toml:"collector"`
	Instances []instanceFile `toml:"instance"`
	CMS       *cmsFile       `toml:"cms"`
	Retention retentionFile  `toml:"retention"`
	Alerts    *alertsFile    `toml:"alerts"` // read by loadAlertConfig
}

type collectorFile struct {
	Interval         time.Duration  `toml:"interval"`
	Timeout          time.Duration  `toml:"timeout"`
	Concurrency      int            `toml:"concurrency"`
	InflightInterval time.Duration  `toml:"inflight_interval"`
	Jitter           *time.Duration `toml:"jitter"`
	Retry            time.Duration  `toml:"retry"`
}

type retentionFile struct {
	RestoreDays  int `toml:"restores_days"`
	RunDays      int `toml:"runs_days"`
	InflightDays int `toml:"inflight_days"`
}

type instanceFile struct {
	Name                   string            `toml:"name"`
	Host                   string            `toml:"host"`
	Port                   int               `toml:"port"`
	InstanceName           string            `toml:"instance"`
	Auth                   string            `toml:"auth"`
	User                   string            `toml:"user"`
	PasswordEnv            string            `toml:"password_env"`
	PasswordFile           string            `toml:"password_file"`
	Encrypt                string            `toml:"encrypt"`
	TrustServerCertificate bool              `toml:"trust_server_certificate"`
	Certificate            string            `toml:"certificate"`
	HostNameInCertificate  string            `toml:"host_name_in_certificate"`
	Tags                   map[string]string `toml:"tags"`
	Keytab                 string            `toml:"keytab"`
	CredentialCache        string            `toml:"credential_cache"`
	Krb5Conf               string            `toml:"krb5_conf"`
	Realm                  string            `toml:"realm"`
	SPN                    string            `toml:"spn"`
	Entra                  string            `toml:"entra"`
	Tenant                 string            `toml:"tenant"`
	ClientCertificate      string            `toml:"client_certificate"`
}

type cmsFile struct {
	instanceFile
	Group string `toml:"group"`
}

func (f instanceFile) instance() mssql.Instance {
	return mssql.Instance{Name: f.Name, Host: f.Host, Port: f.Port, InstanceName: f.InstanceName, Auth: f.Auth,
		User: f.User, PasswordEnv: f.PasswordEnv, PasswordFile: f.PasswordFile, Encrypt: f.Encrypt,
		TrustServerCertificate: f.TrustServerCertificate, Certificate: f.Certificate,
		HostNameInCertificate: f.HostNameInCertificate, Tags: f.Tags,
		Keytab: f.Keytab, CredentialCache: f.CredentialCache, Krb5Conf: f.Krb5Conf, Realm: f.Realm, SPN: f.SPN,
		Entra: f.Entra, Tenant: f.Tenant, ClientCertificate: f.ClientCertificate}
}

// loadConfig reads and validates the collector's TOML file at path.
func loadConfig(path string) (*mssql.Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cfg, err := parseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// parseConfig decodes and validates a TOML document. Unknown keys are
// errors: a misspelt password_env would otherwise fail only at connect time.
func parseConfig(b []byte) (*mssql.Config, error) {
	var f configFile
	md, err := toml.NewDecoder(bytes.NewReader(b)).Decode(&f)
	if err != nil {
		return nil, err
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return nil, fmt.Errorf("unknown key(s): %s", strings.Join(keys, ", "))
	}
	c := f.Collector
	cfg := &mssql.Config{
		Collector: mssql.Collector{Interval: c.Interval, Timeout: c.Timeout, Concurrency: c.Concurrency,
			InflightInterval: c.InflightInterval, Jitter: c.Jitter, Retry: c.Retry},
		Retention: mssql.Retention{RestoreDays: f.Retention.RestoreDays, RunDays: f.Retention.RunDays,
			InflightDays: f.Retention.InflightDays},
	}
	for _, in := range f.Instances {
		cfg.Instances = append(cfg.Instances, in.instance())
	}
	if f.CMS != nil {
		cfg.CMS = &mssql.CMS{Instance: f.CMS.instance(), Group: f.CMS.Group}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}
