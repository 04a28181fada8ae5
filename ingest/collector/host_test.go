package collector_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/ingest/mssql/mssqltest"
	"github.com/restorewatch/restorewatch/store"
)

func TestUpgradeBetweenPassesAddsABuildPoint(t *testing.T) {
	f := newFleet(t)
	in := f.add("SQL01", "13.0.4474.0")
	in.Startup(base.Add(-72 * time.Hour))
	scriptRestores(in, "Sales", base.Add(-48*time.Hour), 2, 300)
	f.once()
	// The upgrade to 2016 SP2 restarts the instance: a new error log
	// begins with the new banner, which dates the change; the next pass's
	// snapshot sees the new build too.
	in.SetVersion("13.0.5026.0")
	in.Startup(base.Add(10 * time.Hour))
	in.SetClock(base.Add(24 * time.Hour))
	scriptRestores(in, "Sales", base.Add(20*time.Hour), 1, 100)
	f.once()
	d := f.sqlite()
	got := dumpRows(t, d, `SELECT version, `+utcText(d, "observed_local")+` AS at FROM host_snapshot
		WHERE source = 'live' ORDER BY observed_local`)
	want := []string{"version=13.0.4474.0 at=2026-03-02 06:00:00 ", "version=13.0.5026.0 at=2026-03-03 06:00:00 "}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("live build points:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got = dumpRows(t, d, `SELECT version, `+utcText(d, "observed_local")+` AS at FROM host_snapshot
		WHERE source = 'live-errorlog' ORDER BY observed_local`)
	want = []string{"version=13.0.4474.0 at=2026-02-27 06:00:00 ", "version=13.0.5026.0 at=2026-03-02 16:00:00 "}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("startup build points:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	rs := f.restores("SQL01")
	if last := rs[len(rs)-1]; last.InstanceBuild != "13.0.5026.0" {
		t.Errorf("the restore after the upgrade ran on %q", last.InstanceBuild)
	}
	if first := rs[0]; first.InstanceBuild != "13.0.4474.0" {
		t.Errorf("the restore before the upgrade ran on %q", first.InstanceBuild)
	}
}

// Older engines lack columns the newer queries read; the version gates must
// keep every source working (the scripted server answers error 207/208 to
// an ungated query, as SQL Server would).
func TestOldVersionsAreGated(t *testing.T) {
	for _, v := range []string{"10.50.6000.34", "11.0.7001.0", "12.0.6024.0", "13.0.5026.0", "17.0.4025.3"} {
		t.Run(v, func(t *testing.T) {
			f := newFleet(t)
			in := f.add("SQL01", v)
			in.Startup(base.Add(-72 * time.Hour))
			scriptRestores(in, "Sales", base.Add(-48*time.Hour), 2, 60)
			f.once()
			r := f.runs()["SQL01"]
			if r.Status != store.RunOK || len(r.Errors) != 0 {
				t.Fatalf("status %s errors %v", r.Status, r.Errors)
			}
			d := f.sqlite()
			// sys.dm_server_services has instant_file_initialization_enabled
			// from 2012 SP4 and 2016 SP1 only: 2008 R2 and 2014 report none.
			if n := count(t, d, `SELECT COUNT(*) FROM host_snapshot WHERE source = 'live' AND memory_mb = 131072
				AND cores = 16 AND (ifi = 1 OR ifi IS NULL AND (version LIKE '10.%' OR version LIKE '12.%')) AND os LIKE 'Windows Server 2019%' AND version = ?`, v); n != 1 {
				t.Errorf("live snapshot incomplete: %v", dumpRows(t, d, `SELECT version, memory_mb, cores, sockets, ifi, os, extra FROM host_snapshot WHERE source = 'live'`))
			}
			want := 0
			if v < "12" { // 2008 R2 and 2012 have no backupset.key_algorithm
				want = 2
			}
			if n := count(t, d, `SELECT COUNT(*) FROM history_row WHERE `+fact(d, 24)+` IS NULL`); n != want {
				t.Errorf("%d history rows without key_algorithm, want %d", n, want)
			}
		})
	}
}

func TestInstancesFromCMS(t *testing.T) {
	f := newFleet(t)
	var servers []mssqltest.Registered
	for _, x := range []struct{ name, group string }{{"BILL1", "Production/Billing"}, {"HR1", "Production"},
		{"TEST1", "Test"}, {"PRODUCTIONX", "ProductionX"}} {
		in := f.add(x.name, "16.0.4135.4")
		in.Startup(base.Add(-72 * time.Hour))
		scriptRestores(in, "Sales", base.Add(-48*time.Hour), 1, 60)
		port := f.cfg.Instances[len(f.cfg.Instances)-1].Port
		servers = append(servers, mssqltest.Registered{Name: x.name, Server: fmt.Sprintf("127.0.0.1,%d", port), Group: x.group})
	}
	// The CMS's certificate names it otherwise than its address: its
	// host_name_in_certificate is its own, not its servers'.
	cms := f.addServed("CMS01", "16.0.4135.4", serving{hosts: []string{"cms01.corp.example"}})
	cms.SetRegistered(servers...)
	cmsPort := f.cfg.Instances[len(f.cfg.Instances)-1].Port
	// BILL1 stays configured by hand, with its own tags: it overrides its
	// CMS entry. The others come from the CMS only.
	f.cfg.Instances = f.cfg.Instances[:1]
	f.cfg.Instances[0].Tags = map[string]string{"team": "billing"}
	f.cfg.CMS = &mssql.CMS{Instance: mssql.Instance{Name: "cms:CMS01", Host: "127.0.0.1", Port: cmsPort, Auth: "sql",
		User: testUser, PasswordEnv: passEnv, Certificate: f.caFile, HostNameInCertificate: "cms01.corp.example",
		Tags: map[string]string{"env": "prod"}}, Group: "production"}
	f.once()
	runs := f.runs()
	for _, name := range []string{"BILL1", "HR1"} {
		if r, ok := runs[name]; !ok || r.Status != store.RunOK {
			t.Errorf("%s: %+v", name, r)
		}
	}
	for _, name := range []string{"TEST1", "PRODUCTIONX", "CMS01"} {
		if _, ok := runs[name]; ok {
			t.Errorf("%s collected although it is not in the group", name)
		}
	}
	if r := runs["cms:CMS01"]; r.Status != store.RunOK || r.Rows["instances"] != 2 {
		t.Errorf("CMS run %s rows %v errors %v", r.Status, r.Rows, r.Errors)
	}
	d := f.sqlite()
	got := dumpRows(t, d, `SELECT name, tags FROM instance WHERE name IN ('BILL1', 'HR1') ORDER BY name`)
	want := `name=BILL1 tags={"team":"billing"} ` + "\n" + `name=HR1 tags={"env":"prod"} `
	if strings.Join(got, "\n") != want {
		t.Errorf("tags:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
}
