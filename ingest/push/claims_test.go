package push_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/push"
	"github.com/restorewatch/restorewatch/store"
)

// The identity of DW_Sales on DWH-SQL02 as its msdb records it
// (backupset.family_guid and last_recovery_fork_guid), which /api/plan
// shows to anyone who may read plans.
const (
	victimFamily = "7D1E2F30-4A5B-4C6D-8E9F-0A1B2C3D4E5F"
	victimFork   = "1A2B3C4D-5E6F-4071-8293-A4B5C6D7E8F9"
)

// agBackup is a pushed full backup of DW_Sales on instance, with optional
// AG fields (availability_group, ag_listener, group_database_id) and the
// victim's family GUID and fork; device is where it says the file is.
func agBackup(instance, uuid string, at time.Time, ag, listener, groupDB, device string) string {
	b := store.BackupSet{Instance: instance, Database: "DW_Sales", UUID: uuid, Type: "D", Families: 1,
		FirstLSN: "52000000010000001", LastLSN: "52000000020000001", CheckpointLSN: "52000000010000101",
		Start: at, Finish: at.Add(30 * time.Minute), Size: 80 << 30, SoftwareBuild: "16.0.4135",
		FamilyGUID: victimFamily, FirstForkGUID: victimFork, LastForkGUID: victimFork,
		AvailabilityGroup: ag, AGListener: listener, GroupDatabaseID: groupDB,
		Media: []store.BackupMedia{{Family: 1, DeviceType: 2, Device: device}}}
	line, _ := json.Marshal(map[string]any{"backup": b})
	return string(line)
}

// importVictim imports DWH-SQL02's own backup history of DW_Sales on this
// server (a local import), AG membership given when ag is not "".
func importVictim(t *testing.T, l *ingest.Loader, ag, groupDB string) {
	t.Helper()
	at := time.Date(2026, 11, 20, 1, 0, 0, 0, time.UTC)
	set := store.BackupSet{Instance: "DWH-SQL02", Database: "DW_Sales", UUID: "11111111-0000-4000-8000-000000000001", Type: "D",
		Families: 1, FirstLSN: "52000000010000001", LastLSN: "52000000020000001", CheckpointLSN: "52000000010000101",
		Start: at, Finish: at.Add(3 * time.Hour), Size: 800 << 30, SoftwareBuild: "16.0.4135",
		FamilyGUID: victimFamily, FirstForkGUID: victimFork, LastForkGUID: victimFork, AvailabilityGroup: ag, GroupDatabaseID: groupDB,
		Media: []store.BackupMedia{{Family: 1, DeviceType: 2, Device: `\\backup01\sql\DW_Sales_FULL.bak`}}}
	if _, err := l.Records(context.Background(), "backups", "dwh-sql02.csv", func(s store.Sink) error { return s.BackupSet(set) }); err != nil {
		t.Fatal(err)
	}
}

// apiPlan returns /api/plan's answer for instance's DW_Sales.
func apiPlan(t *testing.T, c *http.Client, base, instance string) string {
	t.Helper()
	resp, err := c.Get(base + "/api/plan?" + url.Values{"instance": {instance}, "database": {"DW_Sales"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/api/plan?instance=%s: %d %s", instance, resp.StatusCode, b)
	}
	return string(b)
}

// Issue 40, HIGH: a zone's token pushed its own instance's backup of
// DW_Sales claiming the victim's name as its AG listener (lower case too)
// or AG name, or copied the victim's family GUID and fork, and the
// victim's plan then restored the attacker's file. A zone's claims now
// merge only its own instances; the victim's plan stays its own.
func TestZoneMayNotClaimAnotherZonesInstance(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	importVictim(t, ingest.NewLoader(db, ingest.LoaderOptions{}), "", "")
	tok, err := db.CreateCollectorToken(ctx, "zone-b", "ZONEB-*")
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := central(t, db)
	newer := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	for i, tc := range []struct{ name, ag, listener string }{
		{"listener named as the victim", "AG-EVIL", "DWH-SQL02"},
		{"lower-case listener", "AG-EVIL2", "dwh-sql02"},
		{"AG named as the victim", "DWH-SQL02", ""},
	} {
		inst := fmt.Sprintf("ZONEB-EVIL%d", i)
		body := rawBatch(t, inst, agBackup(inst, fmt.Sprintf("EEEEEEEE-0000-4000-8000-%012d", i), newer, tc.ag, tc.listener, "",
			`\\evil.example\drop\DW_Sales.bak`))
		if code, msg := pushed(t, ts, ts.URL, tok, body); code != http.StatusOK {
			t.Fatalf("%s: the push of zone-b's own instance: %d %s", tc.name, code, msg)
		}
		reps, err := db.BackupReplicas(ctx, "DWH-SQL02", "DW_Sales")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(reps.Instances, []string{"DWH-SQL02"}) {
			t.Errorf("%s: DWH-SQL02's replicas %v via %q", tc.name, reps.Instances, reps.Via)
		}
		if p := apiPlan(t, ts.Client(), ts.URL, "DWH-SQL02"); strings.Contains(p, "evil.example") || strings.Contains(p, "EVIL") {
			t.Errorf("%s: DWH-SQL02's plan names the attacker's sets: %s", tc.name, p)
		}
	}
	// The zone's own claims still hold within it: its listener plans
	// from its own instance.
	reps, err := db.BackupReplicas(ctx, "AG-EVIL", "DW_Sales")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(reps.Instances, []string{"ZONEB-EVIL0"}) || !strings.Contains(reps.Via, "collector zone-b") {
		t.Errorf("zone-b's own AG: %v via %q", reps.Instances, reps.Via)
	}
}

// Replicas of one AG in two zones merge only on the operator's word
// (token create --ag), and the plan says whose word it took; replicas in
// one zone merge as before.
func TestCrossZoneReplicasNeedTheOperatorsWord(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	const groupDB = "9C8B7A65-4321-4FED-CBA9-876543210FED"
	importVictim(t, ingest.NewLoader(db, ingest.LoaderOptions{}), "AGSALES", groupDB)
	tok, err := db.CreateCollectorToken(ctx, "zone-b", "ZONEB-*")
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := central(t, db)
	at := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	body := rawBatch(t, "ZONEB-R1", agBackup("ZONEB-R1", "BBBBBBBB-0000-4000-8000-000000000001", at, "AGSALES", "", groupDB, `\\zoneb\bk\DW_Sales.bak`),
		agBackup("ZONEB-R1", "BBBBBBBB-0000-4000-8000-000000000002", at.Add(time.Hour), "AGB", "", "AAAA0000-0000-4000-8000-000000000001", `\\zoneb\bk\b.bak`))
	if code, msg := pushed(t, ts, ts.URL, tok, body); code != http.StatusOK {
		t.Fatalf("push: %d %s", code, msg)
	}
	body = rawBatch(t, "ZONEB-R2", agBackup("ZONEB-R2", "BBBBBBBB-0000-4000-8000-000000000003", at.Add(2*time.Hour), "AGB", "",
		"AAAA0000-0000-4000-8000-000000000001", `\\zoneb\bk\b2.bak`))
	if code, msg := pushed(t, ts, ts.URL, tok, body); code != http.StatusOK {
		t.Fatalf("push: %d %s", code, msg)
	}
	reps, _ := db.BackupReplicas(ctx, "DWH-SQL02", "DW_Sales")
	if !slices.Equal(reps.Instances, []string{"DWH-SQL02"}) || !strings.Contains(reps.Via, "this server's own") {
		t.Errorf("without the operator's word: %v via %q", reps.Instances, reps.Via)
	}
	// Within zone-b, its two replicas of AGB merge.
	reps, _ = db.BackupReplicas(ctx, "ZONEB-R2", "DW_Sales")
	if !slices.Equal(reps.Instances, []string{"ZONEB-R2", "ZONEB-R1"}) || !strings.Contains(reps.Via, "collector zone-b") {
		t.Errorf("within zone-b: %v via %q", reps.Instances, reps.Via)
	}
	if err := db.SetCollectorAGs(ctx, "zone-b", []string{"agsales"}); err != nil {
		t.Fatal(err)
	}
	reps, _ = db.BackupReplicas(ctx, "DWH-SQL02", "DW_Sales")
	if !slices.Equal(reps.Instances, []string{"DWH-SQL02", "ZONEB-R1"}) || !strings.Contains(reps.Via, "collector zone-b") ||
		!strings.Contains(reps.Via, "operator") {
		t.Errorf("with the operator's word: %v via %q", reps.Instances, reps.Via)
	}
	// The word covers AGSALES only, not zone-b's other AG.
	reps, _ = db.BackupReplicas(ctx, "AGB", "DW_Sales")
	if !slices.Equal(reps.Instances, []string{"ZONEB-R1", "ZONEB-R2"}) {
		t.Errorf("AGB: %v via %q", reps.Instances, reps.Via)
	}
}

// A token's patterns fold ASCII case only, as the warehouse compares
// names: a token for SQL01 may not write ſQL01 (U+017F), which would be
// stored beside SQL01. The refusal for an instance that another zone or
// this server holds reads the same whoever holds it.
func TestTokenPatternsFoldASCIIOnlyAndRefusalsConfirmNothing(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	tokA, _ := db.CreateCollectorToken(ctx, "zone-a", "SQL01", "sql-a-*")
	tokB, _ := db.CreateCollectorToken(ctx, "zone-b")
	if _, err := ingest.NewLoader(db, ingest.LoaderOptions{}).Records(ctx, "errorlog", "ERRORLOG", feed(records(t))); err != nil {
		t.Fatal(err)
	}
	local := records(t).LogRestores[0].Instance
	ts, _ := central(t, db)
	for _, inst := range []string{"sql01", "SQL-A-01"} {
		if code, msg := pushed(t, ts, ts.URL, tokA, rawBatch(t, inst, logLine(inst))); code != http.StatusOK {
			t.Errorf("zone-a writing %s: %d %s", inst, code, msg)
		}
	}
	for _, inst := range []string{"\u017fQL01", "SQL-\u212a-01" /* Kelvin sign folds to k */} {
		if code, msg := pushed(t, ts, ts.URL, tokA, rawBatch(t, inst, logLine(inst))); code != http.StatusForbidden {
			t.Errorf("zone-a writing %q: %d %s, want 403", inst, code, msg)
		}
	}
	_, ofZone := pushed(t, ts, ts.URL, tokB, rawBatch(t, "SQL01", logLine("SQL01")))
	_, ofServer := pushed(t, ts, ts.URL, tokB, rawBatch(t, local, logLine(local)))
	if strings.ReplaceAll(ofZone, "SQL01", "X") != strings.ReplaceAll(ofServer, local, "X") || ofZone == "" ||
		strings.Contains(ofZone, "zone-a") {
		t.Errorf("refusals tell who holds what:\n%s\n%s", ofZone, ofServer)
	}
}

// hostLine is a host snapshot line of instance with n Extra facts.
func hostLine(instance string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"host":{"Instance":%q,"ObservedAt":"2026-03-02T06:00:00Z","Extra":{`, instance)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":"v"`, i)
	}
	b.WriteString(`}}}`)
	return b.String()
}

// Issue 40, LOW–MEDIUM: host snapshots of millions of tiny Extra members
// fit the batch's value budget but cost far more decoded (RSS 170 → 646
// MB) and made a 3.7 MB instance page. Map-shaped objects are bounded
// like arrays before decoding, and a snapshot's facts at validation.
func TestMapShapedFieldsBounded(t *testing.T) {
	for name, body := range map[string][]byte{
		"one object of 5,000 members":       rawBatch(t, "SQLB01", hostLine("SQLB01", 5000)),
		"200 snapshots of 1,000 facts each": rawBatch(t, "SQLB01", slices.Repeat([]string{hostLine("SQLB01", 1000)}, 200)...),
	} {
		if _, err := push.Decode(bytes.NewReader(body)); !errors.Is(err, push.ErrTooLarge) {
			t.Errorf("%s: Decode: %v, want ErrTooLarge", name, err)
		}
	}
	if _, err := push.Decode(bytes.NewReader(rawBatch(t, "SQLB01", hostLine("SQLB01", 40)))); err != nil {
		t.Errorf("a snapshot of 40 facts: %v", err)
	}
	h := store.HostSnapshot{Instance: "SQLB01", ObservedAt: time.Date(2026, 3, 2, 6, 0, 0, 0, time.UTC), Extra: map[string]string{}}
	for i := range store.MaxHostFacts + 1 {
		h.Extra[fmt.Sprint(i)] = "v"
	}
	if err := h.Validate(); err == nil {
		t.Errorf("a snapshot of %d facts is valid", len(h.Extra))
	}
}

// A batch's run records are stored with its applied mark, in one
// transaction: a resend after an apply cut short, or a second apply of
// the same batch, stores them once (before, 3 of 6 kill points recorded
// them twice).
func TestPushRunsRecordedOnce(t *testing.T) {
	db, path := openDB(t)
	ctx := context.Background()
	at := time.Date(2026, 3, 2, 6, 0, 0, 0, time.UTC)
	fin := at.Add(time.Minute)
	run := store.CollectorRun{Instance: "SQLB01", Started: at, Finished: &fin, Status: "ok"}
	for range 3 {
		if err := db.RecordPush(ctx, "zone-b", "0123456789abcdef0123456789abcdef", 1, 0, run); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, path, `SELECT COUNT(*) FROM collector_run`); n != 1 {
		t.Errorf("%d run records after three applies of one batch, want 1", n)
	}
}

// A history that names no AG and no family GUID lists the instances whose
// LSNs may prove they continue it (issue 39); another zone's are not among
// them: LSNs are shown by every plan, so a zone could forge a continuation.
func TestLSNCandidatesStayInTheZone(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	l := ingest.NewLoader(db, ingest.LoaderOptions{})
	at := time.Date(2026, 11, 20, 1, 0, 0, 0, time.UTC)
	for _, inst := range []string{"DWH-SQL02", "DWH-SQL03"} {
		set := store.BackupSet{Instance: inst, Database: "DW_Sales", UUID: "22222222-0000-4000-8000-00000000000" + inst[len(inst)-1:], Type: "D",
			Families: 1, FirstLSN: "52000000010000001", LastLSN: "52000000020000001", CheckpointLSN: "52000000010000101",
			Start: at, Finish: at.Add(time.Hour), Size: 1 << 30, FirstForkGUID: victimFork, LastForkGUID: victimFork,
			Media: []store.BackupMedia{{Family: 1, DeviceType: 2, Device: `\\backup01\sql\DW_Sales_FULL.bak`}}}
		if _, err := l.Records(ctx, "backups", inst+".csv", func(s store.Sink) error { return s.BackupSet(set) }); err != nil {
			t.Fatal(err)
		}
	}
	tok, _ := db.CreateCollectorToken(ctx, "zone-b", "ZONEB-*")
	ts, _ := central(t, db)
	line := agBackup("ZONEB-EVIL9", "EEEEEEEE-0000-4000-8000-000000000009", at.Add(2*time.Hour), "", "", "", `\\evil.example\drop\x.trn`)
	line = strings.Replace(line, `"family_guid":"`+victimFamily+`",`, "", 1)
	if code, msg := pushed(t, ts, ts.URL, tok, rawBatch(t, "ZONEB-EVIL9", line)); code != http.StatusOK {
		t.Fatalf("push: %d %s", code, msg)
	}
	reps, err := db.BackupReplicas(ctx, "DWH-SQL02", "DW_Sales")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(reps.Candidates, []string{"DWH-SQL03"}) {
		t.Errorf("DWH-SQL02's LSN candidates: %v, want DWH-SQL03 alone", reps.Candidates)
	}
}

// A push's records commit in one transaction (issue 40): while a batch of
// 9,999 restores is being applied, a reader sees none of them (before, the
// import committed every 5,000, so a kill mid-apply left 7,500 of 9,999
// showing until the collector resent), then all.
func TestPushAppliesInOneTransaction(t *testing.T) {
	db, path := openDB(t)
	ctx := context.Background()
	l := ingest.NewLoader(db, ingest.LoaderOptions{})
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	seen := -1
	_, err := l.Push(ctx, "live", "zone-b/SQLB01", store.PushMark{Collector: "zone-b", Batch: "b1"}, func(s store.Sink) error {
		for i := range 9999 {
			if i == 7500 {
				time.Sleep(time.Second) // an import commits its batches behind the feed: give it the time
				seen = count(t, path, `SELECT COUNT(*) FROM log_restore`)
			}
			if err := s.LogRestore(store.LogRestore{Instance: "SQLB01", Database: "Sales", Kind: store.KindLog,
				CompletedAt: t0.Add(time.Duration(i) * time.Minute), Pages: 10, Seconds: 1.5,
				Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: i + 1}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if after := count(t, path, `SELECT COUNT(*) FROM log_restore`); seen != 0 || after != 9999 {
		t.Errorf("a reader saw %d restores mid-apply and %d after, want 0 and 9,999", seen, after)
	}
}
