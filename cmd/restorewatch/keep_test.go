package main

import (
	"context"
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql/mssqltest"
	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
	"github.com/restorewatch/restorewatch/store/keep"
)

// After an import, and after analyze, the dashboard's aggregates are kept
// at the warehouse's data version (issue 42), the cohorts at least at an
// earlier one: the next serve reads them instead of every restore.
func TestImportAndAnalyzeKeepTheAggregates(t *testing.T) {
	dbPath := newDB(t, "w.db")
	logs, _ := filepath.Glob("../../ingest/errorlog/testdata/full_diff_log_norecovery_2023.log")
	current := func(step string) {
		t.Helper()
		ctx := context.Background()
		db, err := openWarehouse(ctx, dbPath)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		version, err := db.DataVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{keep.NameFigures, keep.NameRTO, keep.NameInstances} {
			if _, ok, err := keep.Kept(ctx, db, name, Version, version); err != nil || !ok {
				t.Errorf("after %s: %s not kept at the data version %s (%v)", step, name, version, err)
			}
		}
		if a, _, err := keep.Kept(ctx, db, keep.NameCohorts, Version, ""); err != nil || a.Name == "" {
			t.Errorf("after %s: no cohorts kept (%v)", step, err)
		}
		if o, err := db.LoadOrders(ctx); err != nil || o == nil {
			t.Errorf("after %s: no orders kept (%v)", step, err)
		}
	}
	if _, stderr, code := runMain(t, "import", "errorlog", "--db", dbPath, "--instance", "LNX01", logs[0]); code != 0 {
		t.Fatalf("import exit %d: %s", code, stderr)
	}
	current("import")
	if _, stderr, code := runMain(t, "analyze", "--db", dbPath, "--rederive"); code != 0 {
		t.Fatalf("analyze exit %d: %s", code, stderr)
	}
	current("analyze --rederive")
}

// keptCurrent fails the test unless the dashboard's aggregates are kept at
// the data version of the warehouse at path within guard, and returns the
// figures kept.
func keptCurrent(t *testing.T, path, step string) keep.Figures {
	t.Helper()
	ctx := context.Background()
	db, err := openWarehouse(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var missing []string
	for deadline := time.Now().Add(guard); ; time.Sleep(50 * time.Millisecond) {
		version, err := db.DataVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		missing = missing[:0]
		var figures keep.Figures
		for _, name := range []string{keep.NameFigures, keep.NameRTO, keep.NameInstances} {
			a, ok, err := keep.Kept(ctx, db, name, Version, version)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				missing = append(missing, name)
			} else if name == keep.NameFigures {
				if err := keep.Decode(a.Body, &figures); err != nil {
					t.Fatal(err)
				}
			}
		}
		if len(missing) == 0 {
			return figures
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %v not kept at the data version %s", step, missing, version)
		}
	}
}

// A collection stores restores, and the dashboard's aggregates are kept at
// the new data version (issue 42) whichever way it came: a collect --once
// into the warehouse, and collectors that push to a central serve, which
// keeps them beside it. The first overview of a server started next then
// reads them (web's TestFirstStartAfterAnImportReadsWhatItKept) instead
// of every restore.
func TestCollectAndPushKeepTheAggregates(t *testing.T) {
	t.Setenv(pushPassEnv, pushPass)
	dir := t.TempDir()
	base := time.Date(2026, 3, 2, 6, 0, 0, 0, time.UTC)
	tdsCA, err := tdstest.NewCA("restorewatch test TDS CA")
	if err != nil {
		t.Fatal(err)
	}
	tdsCAFile := writeFile(t, dir, "tds-ca.pem", tdsCA.PEM)
	in := mssqltest.New("SQL-K1", "15.0.4236.7", -300)
	in.SetClock(base)
	in.Startup(base.Add(-72 * time.Hour))
	script(in, base.Add(-48*time.Hour), 4)
	tc, err := tdsCA.ServerTLS("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	srv := tdstest.New(tdstest.Config{User: pushUser, Password: pushPass, Handler: in, ServerVersion: "15.0.4236.7", TLS: tc})
	addr, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	_, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	config := collectorConfig(t, dir, "k.toml", tdsCAFile, map[string]int{"SQL-K1": p}, "SQL-K1")

	direct := newDB(t, "direct.db")
	if _, stderr, code := runMain(t, "collect", "--db", direct, "--config", config, "--once"); code != 0 {
		t.Fatalf("collect --once: exit %d: %s", code, stderr)
	}
	if f := keptCurrent(t, direct, "collect --once"); f.Empty {
		t.Error("collect --once kept the figures of no restore")
	}

	central := newDB(t, "central.db")
	tok := createToken(t, central, "zone-k")
	tokFile := writeFile(t, dir, "k.token", []byte(tok+"\n"))
	caFile, certFile, keyFile := serverCA(t, dir)
	addr = serveWarehouseWith(t, central, func(m *Main) { m.cli.Serve.keepEvery = 50 * time.Millisecond },
		"--addr", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile)
	if stderr, code := pushOnce(t, config, filepath.Join(dir, "local.db"), "https://"+addr, tokFile, caFile, "2m"); code != 0 {
		t.Fatalf("collect --push: exit %d: %s", code, stderr)
	}
	if f := keptCurrent(t, central, "a push"); f.Empty {
		t.Error("the central serve kept the figures of no restore after a push")
	}
}

// So does the demo: `serve --demo` shows its first pages from what it kept.
func TestDemoKeepsTheAggregates(t *testing.T) {
	db := newDB(t, "demo.db")
	if _, stderr, code := runMain(t, "demo", "--db", db, "--instances", "3", "--restores", "600"); code != 0 {
		t.Fatalf("demo: exit %d: %s", code, stderr)
	}
	if f := keptCurrent(t, db, "demo"); f.Empty {
		t.Error("the demo kept the figures of no restore")
	}
}
