package collector_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/collector"
	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
	"github.com/restorewatch/restorewatch/store"
)

// With encrypt left out, every login is encrypted to a validated
// certificate: TDS 8 on 2022, TDS 7.x TLS before it, and a server that
// offers no TLS (the fake server) never receives LOGIN7.
func TestDefaultLoginsAreEncrypted(t *testing.T) {
	f := newFleet(t)
	for _, x := range []struct{ name, version string }{{"NEW", "16.0.4135.4"}, {"OLD", "15.0.4236.7"}} {
		f.add(x.name, x.version).Startup(base.Add(-time.Hour))
	}
	f.addServed("FAKE", "16.0.4135.4", serving{noTLS: true}).Startup(base.Add(-time.Hour))
	f.once()
	runs := f.runs()
	for name, want := range map[string]tdstest.Encryption{"NEW": tdstest.Strict, "OLD": tdstest.TLS} {
		r := runs[name]
		if r.Status != store.RunOK || len(r.Notes) != 0 {
			t.Errorf("%s: %s errors %v notes %v", name, r.Status, r.Errors, r.Notes)
		}
		if l := f.srv[name].Logins(); len(l) != 1 || l[0].Encryption != want {
			t.Errorf("%s: logins %+v, want one %v", name, l, want)
		}
	}
	r := runs["FAKE"]
	if r.Status != store.RunFailed || !strings.Contains(r.Errors["connect"], "offers no TLS") {
		t.Errorf("FAKE: %s %v", r.Status, r.Errors)
	}
	if l := f.srv["FAKE"].Logins(); len(l) != 0 {
		t.Errorf("the server without TLS received LOGIN7: %+v", l)
	}
	if strings.Contains(f.logs.String(), testPass) {
		t.Error("the log holds the password")
	}
}

// An explicit encrypt = "false" (or "disable", or trust_server_certificate)
// works, and says so on every pass: in the run record and the log.
func TestExplicitUnprotectedLoginWarnsEveryPass(t *testing.T) {
	f := newFleet(t)
	f.addServed("PLAIN", "15.0.4236.7", serving{noTLS: true, encrypt: mssql.EncryptFalse}).Startup(base.Add(-time.Hour))
	f.add("TRUSTING", "16.0.4135.4").Startup(base.Add(-time.Hour))
	f.cfg.Instances[1].TrustServerCertificate, f.cfg.Instances[1].Certificate = true, ""
	f.add("SAFE", "16.0.4135.4").Startup(base.Add(-time.Hour))
	for pass := 1; pass <= 2; pass++ {
		f.once()
		runs := f.runs()
		for name, want := range map[string]string{"PLAIN": `encrypt = "false"`, "TRUSTING": "trust_server_certificate = true"} {
			r := runs[name]
			notes := strings.Join(r.Notes, "\n")
			if r.Status != store.RunOK || !strings.Contains(notes, mssql.InsecureNote) || !strings.Contains(notes, want) {
				t.Errorf("pass %d, %s: %s notes %q, want the warning with %q", pass, name, r.Status, notes, want)
			}
		}
		if r := runs["SAFE"]; len(r.Notes) != 0 {
			t.Errorf("pass %d, SAFE: notes %v", pass, r.Notes)
		}
		for _, name := range []string{"PLAIN", "TRUSTING"} {
			if n := strings.Count(f.logs.String(), `level=WARN msg="login not protected" instance=`+name); n != pass {
				t.Errorf("pass %d: %d warnings logged for %s", pass, n, name)
			}
		}
	}
	if l := f.srv["PLAIN"].Logins(); len(l) != 2 || l[0].Encryption != tdstest.Unencrypted {
		t.Errorf("PLAIN logins %+v", l)
	}
	if l := f.srv["TRUSTING"].Logins(); len(l) != 2 || l[0].Encryption != tdstest.TLS {
		t.Errorf("TRUSTING logins %+v", l)
	}
}

// A certificate the collector cannot validate stops the pass before the
// login, with what to configure; host_name_in_certificate accepts a
// certificate that names the server otherwise.
func TestUntrustedCertificateIsRefused(t *testing.T) {
	f := newFleet(t)
	f.addServed("ALIAS", "16.0.4135.4", serving{hosts: []string{"sql-alias.corp.example"}}).Startup(base.Add(-time.Hour))
	f.add("OTHERCA", "16.0.4135.4").Startup(base.Add(-time.Hour))
	other, err := tdstest.NewCA("another CA")
	if err != nil {
		t.Fatal(err)
	}
	f.cfg.Instances[1].Certificate = t.TempDir() + "/other.pem"
	writeFile(t, f.cfg.Instances[1].Certificate, other.PEM)
	f.once()
	runs := f.runs()
	for name, want := range map[string]string{"ALIAS": "host_name_in_certificate", "OTHERCA": "unknown authority"} {
		r := runs[name]
		if r.Status != store.RunFailed || !strings.Contains(r.Errors["connect"], "not trusted") || !strings.Contains(r.Errors["connect"], want) {
			t.Errorf("%s: %s %v", name, r.Status, r.Errors)
		}
		if l := f.srv[name].Logins(); len(l) != 0 {
			t.Errorf("%s: LOGIN7 sent to an untrusted server: %+v", name, l)
		}
	}
	f.cfg.Instances[0].HostNameInCertificate = "sql-alias.corp.example"
	f.once()
	if r := f.runs()["ALIAS"]; r.Status != store.RunOK {
		t.Errorf("ALIAS with host_name_in_certificate: %s %v", r.Status, r.Errors)
	}
	if l := f.srv["ALIAS"].Logins(); len(l) != 1 || l[0].Encryption != tdstest.Strict {
		t.Errorf("ALIAS logins %+v", l)
	}
}

// A server before 2022 refuses TDS 8 once per Run: later passes log in with
// TDS 7.x TLS directly.
func TestFallbackToTDS7IsRemembered(t *testing.T) {
	f := newFleet(t)
	f.add("OLD", "15.0.4236.7").Startup(base.Add(-time.Hour))
	f.cfg.Collector.Interval = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- collector.Run(ctx, f.db, f.cfg, collector.Options{Logger: f.logger()}) }()
	waitFor(t, "four finished passes", func() bool {
		runs, _ := f.db.Runs(context.Background(), "OLD", 10)
		return len(runs) >= 4 && runs[0].Finished != nil
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	accepted, logins := f.srv["OLD"].Accepted(), f.srv["OLD"].Logins()
	if len(logins) < 4 {
		t.Fatalf("%d logins", len(logins))
	}
	for _, l := range logins {
		if l.Encryption != tdstest.TLS {
			t.Errorf("login %+v", l)
		}
	}
	// One TDS 8 attempt, then one connection per pass (and perhaps one
	// more cut short by the stop); without the memory, one attempt per pass.
	if extra := accepted - len(logins); extra < 1 || extra > 2 {
		t.Errorf("%d connections for %d logins: %d without a login, want the one TDS 8 attempt", accepted, len(logins), extra)
	}
}
