package postgres_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func open(tb testing.TB) *postgres.DB {
	tb.Helper()
	db, err := postgres.Open(context.Background(), pgtest.URL(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// The engines share migration numbers: one schema version means the same
// tables on both.
func TestSchemaVersionsMatchSQLite(t *testing.T) {
	if got, want := postgres.SchemaVersion(), sqlite.SchemaVersion(); got != want {
		t.Fatalf("postgres schema %d, sqlite %d", got, want)
	}
	db := open(t)
	v, err := db.WarehouseSchema(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v != sqlite.SchemaVersion() {
		t.Errorf("applied schema %d, want %d", v, sqlite.SchemaVersion())
	}
	for _, table := range []string{"instance", "restore", "history_row", "log_restore", "collector_token", "alert_event", "watch"} {
		ok, err := db.HasTable(context.Background(), table)
		if err != nil || !ok {
			t.Errorf("table %s: %v, %v", table, ok, err)
		}
	}
}

// A second open (a replica starting) applies nothing again.
func TestReopenMigratesOnce(t *testing.T) {
	u := pgtest.URL(t)
	for range 2 {
		db, err := postgres.Open(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
}

func TestConfigVerifiesTLSAndKeepsThePasswordOut(t *testing.T) {
	pw := t.TempDir() + "/pw"
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(postgres.EnvPasswordFile, pw)
	cfg, err := postgres.Config("postgres://rw@db.example:5432/rw")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.ConnConfig.Password; got != "s3cret" {
		t.Errorf("password %q from the file, want s3cret", got)
	}
	if cfg.ConnConfig.TLSConfig == nil || cfg.ConnConfig.TLSConfig.InsecureSkipVerify || cfg.ConnConfig.TLSConfig.ServerName != "db.example" {
		t.Errorf("TLS %+v: want verified against db.example by default", cfg.ConnConfig.TLSConfig)
	}
	if len(cfg.ConnConfig.Fallbacks) != 0 {
		t.Errorf("%d fallbacks: verify-full has none (no plaintext retry)", len(cfg.ConnConfig.Fallbacks))
	}
	if got := cfg.ConnConfig.RuntimeParams["application_name"]; got != "restorewatch" {
		t.Errorf("application_name %q, want restorewatch by default", got)
	}
	// On a Unix socket there is no TLS to verify; a replica may name
	// itself for pg_stat_activity.
	sock, err := postgres.Config("postgres://rw@/rw?host=/run/postgresql&application_name=replica-a")
	if err != nil {
		t.Fatal(err)
	}
	if got := sock.ConnConfig.RuntimeParams["application_name"]; got != "replica-a" {
		t.Errorf("application_name %q, want the URL's replica-a", got)
	}
	_, err = postgres.Config("mysql://rw:hunter2@x/y")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %v: want a refusal without the password", err)
	}
}

// backup writes a pg_dump archive that pg_restore reads back.
func TestBackupIsARestorableDump(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	if _, err := db.CreateCollectorToken(ctx, "zone-a"); err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/w.dump"
	if err := db.Backup(ctx, path); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pg_restore", "--list", path).CombinedOutput()
	if err != nil {
		t.Fatalf("pg_restore --list: %v: %s", err, out)
	}
	for _, want := range []string{"TABLE DATA public collector_token", "TABLE public restore"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the dump lacks %q", want)
		}
	}
}
