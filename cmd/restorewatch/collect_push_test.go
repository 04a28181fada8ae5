package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	pushUser    = "restorewatch"
	pushPass    = "Zone;Pw@push/7?&"
	pushPassEnv = "RW_PUSH_TEST_PASSWORD"
)

// Two collectors in two network zones push into one central serve over
// HTTPS (a CA made now); zone B's network is cut for two passes (refused
// connections, then a connection dropped halfway through a batch), its
// batches wait in its spool, and once reconnected everything arrives: the
// central warehouse ends with exactly the restores of a warehouse that
// collected the same fleet directly at the same moments, nothing doubled. A
// batch replayed after its acknowledgement was lost adds nothing; a revoked
// token is refused and its batches stay spooled.
func TestTwoZonesPushIntoOneServe(t *testing.T) {
	t.Setenv(pushPassEnv, pushPass)
	dir := t.TempDir()
	base := time.Date(2026, 3, 2, 6, 0, 0, 0, time.UTC)

	// The fleet: two instances in zone A, one in zone B, served over TDS.
	fleet, ports := tdsFleet(t, dir, base, "SQL-A1", "SQL-A2", "SQL-B1")
	tdsCAFile := filepath.Join(dir, "tds-ca.pem")
	for _, in := range fleet {
		in.AddBackups(backupSet(1, "D", base.Add(-30*time.Hour)), backupSet(2, "L", base.Add(-29*time.Hour)))
	}
	zoneA := collectorConfig(t, dir, "zone-a.toml", tdsCAFile, ports, "SQL-A1", "SQL-A2")
	zoneB := collectorConfig(t, dir, "zone-b.toml", tdsCAFile, ports, "SQL-B1")
	all := collectorConfig(t, dir, "all.toml", tdsCAFile, ports, "SQL-A1", "SQL-A2", "SQL-B1")

	// The central server: tokens made with the CLI, then serve over TLS.
	central := newDB(t, "central.db")
	tokA, tokB := createToken(t, central, "zone-a"), createToken(t, central, "zone-b")
	tokAFile, tokBFile := writeFile(t, dir, "a.token", []byte(tokA+"\n")), writeFile(t, dir, "b.token", []byte(tokB+"\n"))
	caFile, certFile, keyFile := serverCA(t, dir)
	addr := serveWarehouse(t, central, "--addr", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile)
	proxy := newCutProxy(t, addr)

	direct := newDB(t, "direct.db")
	collectA := func(wait string) (string, int) {
		return pushOnce(t, zoneA, filepath.Join(dir, "a-local.db"), "https://"+addr, tokAFile, caFile, wait)
	}
	collectB := func() (string, int) {
		wait := "500ms" // cut off: give up soon
		if proxy.forwarding() {
			wait = "2m"
		}
		return pushOnce(t, zoneB, filepath.Join(dir, "b-local.db"), "https://"+proxy.addr(), tokBFile, caFile, wait)
	}
	collectDirect := func() {
		if _, stderr, code := runMain(t, "collect", "--db", direct, "--config", all, "--once"); code != 0 {
			t.Fatalf("direct collect: exit %d: %s", code, stderr)
		}
	}
	bSpool := filepath.Join(dir, "b-local.db.spool")

	// Pass 1: zone A pushes; zone B's connections are refused.
	if stderr, code := collectA("2m"); code != 0 {
		t.Fatalf("zone A: exit %d: %s", code, stderr)
	}
	proxy.set(refuse)
	stderr, code := collectB()
	if code != 1 || !strings.Contains(stderr, "stay in "+bSpool) {
		t.Fatalf("zone B cut off: exit %d, want 1 saying its batches stay spooled: %s", code, stderr)
	}
	after1 := spoolFiles(t, bSpool)
	if len(after1) == 0 {
		t.Fatal("zone B spooled nothing while cut off")
	}
	collectDirect()

	// Pass 2: more restores everywhere; zone B's connection drops halfway
	// through its first batch.
	for _, in := range fleet {
		script(in, base.Add(time.Hour), 3)
		in.AddBackups(backupSet(3, "L", base.Add(2*time.Hour)))
		in.SetClock(base.Add(6 * time.Hour))
	}
	proxy.set(cutMidway)
	if _, code := collectB(); code != 1 {
		t.Fatalf("zone B cut midway: exit %d, want 1", code)
	}
	after2 := spoolFiles(t, bSpool)
	if len(after2) <= len(after1) {
		t.Fatalf("zone B's spool holds %d batches after its second pass, %d after its first", len(after2), len(after1))
	}
	if proxy.cuts.Load() == 0 {
		t.Fatal("the proxy cut no connection midway")
	}
	saved, err := os.ReadFile(after2[0])
	if err != nil {
		t.Fatal(err)
	}
	collectDirect()

	// Reconnected: zone B sends what it spooled first, then its third pass;
	// zone A collects its second pass.
	proxy.set(forward)
	if stderr, code := collectB(); code != 0 {
		t.Fatalf("zone B reconnected: exit %d: %s", code, stderr)
	}
	if left := spoolFiles(t, bSpool); len(left) != 0 {
		t.Fatalf("zone B's spool still holds %d batches", len(left))
	}
	if stderr, code := collectA("2m"); code != 0 {
		t.Fatalf("zone A: exit %d: %s", code, stderr)
	}
	collectDirect()

	want, got := restoresJSON(t, direct), restoresJSON(t, central)
	if len(want) != 3*2*(4+3) {
		t.Fatalf("the direct warehouse has %d restores, want %d", len(want), 3*2*7)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("central warehouse differs from a direct collection:\n%s", diffLines(want, got))
	}
	facts := func(path string) string {
		return countRows(t, path, `SELECT (SELECT COUNT(*) FROM history_row) || '/' || (SELECT COUNT(*) FROM log_restore)`)
	}
	wantFacts := facts(direct)
	if f := facts(central); f != wantFacts {
		t.Errorf("central holds %s history rows/log records, a direct collection %s", f, wantFacts)
	}

	// So does msdb's backup history, for restore plans.
	sets := func(path string) string {
		return countRows(t, path, `SELECT count(*) || ':' || string_agg(k, ';') FROM (SELECT i.name || '/' || b.database_name || '/' || b.backup_set_uuid || '/' || b.first_lsn AS k
			FROM backup_set b JOIN instance i ON i.id = b.instance_id ORDER BY k) AS s`)
	}
	if got, want := sets(central), sets(direct); got != want || !strings.HasPrefix(want, "9:") {
		t.Errorf("central's backup sets %s, a direct collection's %s (want 9)", got, want)
	}

	// And each pass's run record, for the central collector page: zone B's
	// three passes, the two made while cut off included.
	runs := countRows(t, central, `SELECT string_agg(k, ',') FROM (SELECT instance || ':' || count(*) || ':' || min(status) AS k
		FROM collector_run GROUP BY instance ORDER BY instance) AS s`)
	if runs != "SQL-A1:2:ok,SQL-A2:2:ok,SQL-B1:3:ok" {
		t.Errorf("central's run records by instance: %s", runs)
	}

	// The configured tags (rto, zone) travel with the batches.
	tags := func(path string) string {
		return countRows(t, path, `SELECT string_agg(name || '=' || tags, ';') FROM (SELECT name, tags FROM instance ORDER BY name) AS s`)
	}
	if got, want := tags(central), tags(direct); got != want || !strings.Contains(got, `"rto":"2h"`) {
		t.Errorf("central's instance tags %s, a direct collection's %s", got, want)
	}

	// A batch whose acknowledgement was lost comes again: acknowledged as a
	// duplicate, nothing added.
	code, body := postBatch(t, addr, caFile, tokB, saved)
	if code != http.StatusOK || !strings.Contains(body, `"status":"duplicate"`) {
		t.Errorf("replayed batch: %d %s, want a duplicate", code, body)
	}
	if f := facts(central); f != wantFacts {
		t.Errorf("after a replay central holds %s, want %s", f, wantFacts)
	}

	// Zone A's token is revoked: its next push is refused, the batch stays.
	if _, stderr, code := runMain(t, "token", "revoke", "--db", central, "zone-a"); code != 0 {
		t.Fatalf("token revoke: exit %d: %s", code, stderr)
	}
	script(fleet["SQL-A1"], base.Add(7*time.Hour), 1)
	fleet["SQL-A1"].SetClock(base.Add(9 * time.Hour))
	stderr, code = collectA("500ms") // refused: gives up soon
	if code != 1 || !strings.Contains(stderr, "refused this collector's token") {
		t.Errorf("revoked zone A: exit %d, want 1 naming the refused token: %s", code, stderr)
	}
	if n := len(spoolFiles(t, filepath.Join(dir, "a-local.db.spool"))); n == 0 {
		t.Error("zone A's refused batch left the spool")
	}
	if got := restoresJSON(t, central); !slices.Equal(got, want) {
		t.Errorf("a revoked collector changed the central warehouse:\n%s", diffLines(want, got))
	}
	if strings.Contains(stderr, tokA) {
		t.Error("the token appears in the collector's output")
	}
}

// token create prints the token once (stdout, alone, for a script to save)
// and keeps only its hash; list shows names and dates and never a token;
// revoke refuses an unknown name; --push never takes the token as a flag.
func TestTokenCommands(t *testing.T) {
	db := newDB(t, "central.db")
	tok := createToken(t, db, "zone-a")
	if !strings.HasPrefix(tok, "rwc_") || strings.ContainsAny(tok, " \n") {
		t.Fatalf("token create printed %q", tok)
	}
	if _, stderr, code := runMain(t, "token", "create", "--db", db, "zone-a"); code != 1 || !strings.Contains(stderr, "revoke it first") {
		t.Errorf("a second token for zone-a: exit %d: %s", code, stderr)
	}
	if _, _, code := runMain(t, "token", "create", "--db", db, "zone a"); code != 2 {
		t.Errorf("a name with a space: exit %d, want 2", code)
	}
	out, _, code := runMain(t, "token", "list", "--db", db)
	if code != 0 || !strings.Contains(out, "zone-a") || !strings.Contains(out, "valid") || strings.Contains(out, tok) {
		t.Errorf("token list: exit %d:\n%s", code, out)
	}
	// A token scoped to its zone's instances (issue 28): list names them.
	if _, stderr, code := runMain(t, "token", "create", "--db", db, "zone-b", "SQL-B-*", `SQL-B\PROD`); code != 0 || !strings.Contains(stderr, "SQL-B-*") {
		t.Errorf("token create with instances: exit %d: %s", code, stderr)
	}
	if out, _, _ := runMain(t, "token", "list", "--db", db); !strings.Contains(out, "INSTANCES") || !strings.Contains(out, `SQL-B-*,SQL-B\PROD`) {
		t.Errorf("token list does not show zone-b's instances:\n%s", out)
	}
	if _, _, code := runMain(t, "token", "revoke", "--db", db, "zone-a"); code != 0 {
		t.Errorf("token revoke: exit %d", code)
	}
	if out, _, _ := runMain(t, "token", "list", "--db", db); !strings.Contains(out, "revoked") {
		t.Errorf("token list after revoke:\n%s", out)
	}
	if _, stderr, code := runMain(t, "token", "revoke", "--db", db, "nobody"); code != 1 || !strings.Contains(stderr, "no valid token") {
		t.Errorf("revoking an unknown collector: exit %d: %s", code, stderr)
	}
	if bytes.Contains(warehouseBytes(t, db), []byte(tok)) {
		t.Error("the warehouse holds the token itself")
	}

	cfg := writeFile(t, t.TempDir(), "c.toml", []byte("[[instance]]\nname = \"X\"\nhost = \"127.0.0.1\"\nuser = \"u\"\npassword_env = \"P\"\n"))
	t.Setenv("RW_PUSH_TOKEN", "")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--push", "https://central.example:8080"}, 2, "RW_PUSH_TOKEN"},
		{[]string{"--push-token-file", cfg}, 2, "go with --push"},
		{[]string{"--push", "http://central.example:8080", "--push-token-file", cfg}, 1, "plain HTTP beyond loopback"},
		{[]string{"--push-token", "x"}, 2, "unknown flag"},
	} {
		args := append([]string{"collect", "--db", filepath.Join(t.TempDir(), "l.db"), "--config", cfg, "--once"}, tc.args...)
		_, stderr, code := runMain(t, args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d saying %q: %s", tc.args, code, tc.code, tc.want, stderr)
		}
	}
}
