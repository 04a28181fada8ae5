package plan_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/plan"
)

const day = 24 * 60

func kinds(c plan.Chain) (full, diff, logs int) {
	for _, s := range c.Steps {
		switch s.Kind {
		case store.KindFull:
			full++
		case store.KindDiff:
			diff++
		case store.KindLog:
			logs++
		}
	}
	return
}

// The example: 20 hours of 15-minute logs after the day's
// differential are the full, the differential and 80 logs, in LSN order.
func TestChainFullDiffAndEightyLogs(t *testing.T) {
	h := newHistory(3)
	at := h.at(day + 20*60)
	c, err := plan.Build(h.sets, "Sales", at)
	if err != nil {
		t.Fatal(err)
	}
	full, diff, logs := kinds(c)
	if full != 1 || diff != 1 || logs != 80 || len(c.Steps) != 82 {
		t.Fatalf("got %d full, %d diff, %d logs (%d steps), want 1, 1, 80", full, diff, logs, len(c.Steps))
	}
	if !c.Steps[0].Set.Start.Equal(h.at(0)) || !c.Steps[1].Set.Start.Equal(h.at(day)) {
		t.Errorf("base: full at %v, diff at %v", c.Steps[0].Set.Start, c.Steps[1].Set.Start)
	}
	for i := 2; i < len(c.Steps); i++ {
		prev, cur := c.Steps[i-1].Set, c.Steps[i].Set
		if plan.Cmp(cur.FirstLSN, prev.LastLSN) > 0 || plan.Cmp(prev.LastLSN, cur.LastLSN) >= 0 {
			t.Fatalf("step %d [%s,%s) does not continue from %s", i+1, cur.FirstLSN, cur.LastLSN, prev.LastLSN)
		}
	}
	last := c.Steps[len(c.Steps)-1]
	if last.StopAt == nil || !last.StopAt.Equal(at) || !last.Set.Start.Equal(at) {
		t.Errorf("last step: start %v stop at %v, want the log of %v with STOPAT", last.Set.Start, last.StopAt, at)
	}
	for i, s := range c.Steps[:len(c.Steps)-1] {
		if s.StopAt != nil {
			t.Errorf("step %d has STOPAT", i+1)
		}
	}
	if !c.Reaches.Equal(at) {
		t.Errorf("reaches %v, want %v", c.Reaches, at)
	}
}

func TestChainLatest(t *testing.T) {
	h := newHistory(2)
	c, err := plan.Build(h.sets, "Sales", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	full, diff, logs := kinds(c)
	// The differential of day 2 00:00 is the newest; no log follows it in a
	// two-day history (the last log is the one at 48:00, before the diff's last LSN).
	if full != 1 || diff != 1 || logs != 0 {
		t.Fatalf("got %d/%d/%d", full, diff, logs)
	}
	if !c.Reaches.Equal(h.at(2 * day).Add(5 * time.Minute)) {
		t.Errorf("reaches %v", c.Reaches)
	}
}

// A copy-only full is restorable but no differential is based on it: the
// next day's differential still pairs with the regular full.
func TestChainCopyOnlyFull(t *testing.T) {
	h := newHistory(5)
	h.data("D", 3*day+12*60+5, true)
	c, err := plan.Build(h.sets, "Sales", h.at(3*day+13*60))
	if err != nil {
		t.Fatal(err)
	}
	full, diff, logs := kinds(c)
	if !c.Steps[0].Set.CopyOnly || full != 1 || diff != 0 || logs != 4 {
		t.Fatalf("before the next differential: copy-only %v, %d/%d/%d, want the copy-only full and 4 logs",
			c.Steps[0].Set.CopyOnly, full, diff, logs)
	}
	c, err = plan.Build(h.sets, "Sales", h.at(4*day+60))
	if err != nil {
		t.Fatal(err)
	}
	if c.Steps[0].Set.CopyOnly || c.Steps[1].Kind != store.KindDiff || !c.Steps[1].Set.Start.Equal(h.at(4*day)) {
		t.Fatalf("after the next differential: %+v", c.Steps[:2])
	}
}

// A copy-only log starts where the previous regular log ended and is not
// needed: the regular log that covers more is chosen.
func TestChainCopyOnlyLogDoesNotBreakTheChain(t *testing.T) {
	h := newHistory(3)
	h.log(2*day+10*60+7, lsnAt(2*day+10*60), lsnAt(2*day+10*60)+400, forkA, forkA, true)
	c, err := plan.Build(h.sets, "Sales", h.at(2*day+12*60))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Steps {
		if s.Set.CopyOnly {
			t.Fatalf("the chain uses the copy-only log %v", s.Set.Start)
		}
	}
	if _, _, logs := kinds(c); logs != 48 {
		t.Errorf("%d logs, want 48", logs)
	}
}

func TestChainStripedFull(t *testing.T) {
	h := newHistory(8)
	var full *store.BackupSet
	for i := range h.sets {
		if h.sets[i].Type == "D" && h.sets[i].Start.Equal(h.at(7*day)) {
			full = &h.sets[i]
		}
	}
	full.Families = 4
	full.Media = []store.BackupMedia{{Family: 3, DeviceType: 2, Device: `G:\s3.bak`}, {Family: 1, DeviceType: 2, Device: `G:\s1.bak`},
		{Family: 2, DeviceType: 2, Device: `G:\s2.bak`}, {Family: 4, DeviceType: 2, Device: `G:\s4.bak`},
		{Family: 1, Mirror: 1, DeviceType: 2, Device: `H:\mirror1.bak`}}
	c, err := plan.Build(h.sets, "Sales", h.at(7*day+5*60))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Steps[0].Devices, ","); got != `G:\s1.bak,G:\s2.bak,G:\s3.bak,G:\s4.bak` {
		t.Fatalf("devices %s", got)
	}
	// One stripe missing: the full cannot be restored; the chain starts
	// from the week before, through its last differential.
	full.Media = full.Media[:3]
	c, err = plan.Build(h.sets, "Sales", h.at(7*day+5*60))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Steps[0].Set.Start.Equal(h.at(0)) || !c.Steps[1].Set.Start.Equal(h.at(6*day)) {
		t.Fatalf("fallback: full %v diff %v", c.Steps[0].Set.Start, c.Steps[1].Set.Start)
	}
	if !strings.Contains(strings.Join(c.Notes, "\n"), "striped set of 4 files with only 3") {
		t.Errorf("notes %q", c.Notes)
	}
}

func TestChainDamagedDiffFallsBackToTheOlderOne(t *testing.T) {
	h := newHistory(3)
	for i := range h.sets {
		if h.sets[i].Type == "I" && h.sets[i].Start.Equal(h.at(2*day)) {
			h.sets[i].Damaged = true
		}
	}
	c, err := plan.Build(h.sets, "Sales", h.at(2*day+60))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Steps[1].Set.Start.Equal(h.at(day)) {
		t.Fatalf("diff %v, want day 1's", c.Steps[1].Set.Start)
	}
	if _, _, logs := kinds(c); logs != 4*24+4 {
		t.Errorf("%d logs, want 100", logs)
	}
}

func TestChainGap(t *testing.T) {
	h := newHistory(7)
	missing := h.drop("L", h.at(5*day+8*60))
	_, err := plan.Build(h.sets, "Sales", h.at(5*day+12*60))
	var gap *plan.GapError
	if !errors.As(err, &gap) {
		t.Fatalf("err %v, want a GapError", err)
	}
	if gap.FromLSN != missing.FirstLSN || gap.ToLSN != missing.LastLSN {
		t.Errorf("gap %s..%s, want %s..%s", gap.FromLSN, gap.ToLSN, missing.FirstLSN, missing.LastLSN)
	}
	if want := h.at(5*day + 7*60 + 45).Add(time.Minute); !gap.LastReachable.Equal(want) {
		t.Errorf("last reachable %v, want %v", gap.LastReachable, want)
	}
	if !strings.Contains(err.Error(), missing.FirstLSN) || !strings.Contains(err.Error(), "2026-11-07 07:46:00 UTC") {
		t.Errorf("message %q", err)
	}
	// Before the gap the plan still works; the next day's differential
	// bridges it.
	if _, err := plan.Build(h.sets, "Sales", h.at(5*day+7*60)); err != nil {
		t.Errorf("before the gap: %v", err)
	}
	if _, err := plan.Build(h.sets, "Sales", h.at(6*day+60)); err != nil {
		t.Errorf("after the next differential: %v", err)
	}
}

func TestChainAfterTheLastLog(t *testing.T) {
	h := newHistory(1)
	// Past the last log, the chain goes to its end and says so, as
	// dbatools restores to the end of the chain.
	latest, err := plan.Build(h.sets, "Sales", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := plan.Build(h.sets, "Sales", h.at(3*day))
	if err != nil {
		t.Fatalf("an instant after the last log: %v", err)
	}
	if len(c.Steps) != len(latest.Steps) || !c.Reaches.Equal(latest.Reaches) || c.Steps[len(c.Steps)-1].StopAt != nil {
		t.Errorf("%d steps reaching %v (STOPAT %v), want the latest chain's %d reaching %v", len(c.Steps), c.Reaches,
			c.Steps[len(c.Steps)-1].StopAt, len(latest.Steps), latest.Reaches)
	}
	if len(c.Notes) == 0 || !strings.Contains(c.Notes[len(c.Notes)-1], "later than the last log backup: the plan restores to the end of the chain") {
		t.Errorf("notes %q", c.Notes)
	}
	_, err = plan.Build(h.sets, "Sales", h.t0.Add(-time.Hour))
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "no usable full backup") {
		t.Fatalf("before the first full: %v", err)
	}
}

// A restore WITH RECOVERY to 08:55 on day 9 (at 10:30) starts recovery
// fork B: the logs taken after it overlap the old branch's LSNs and are
// told apart by their fork GUIDs.
func TestChainFork(t *testing.T) {
	h := newHistory(10)
	// Keep the old branch up to 10:30 on day 9 and drop its later logs.
	var kept []store.BackupSet
	for _, s := range h.sets {
		if s.Type == "L" && s.Start.After(h.at(9*day+10*60+30)) {
			continue
		}
		kept = append(kept, s)
	}
	h.sets = kept
	const forkB = "BBBBBBBB-0000-0000-0000-000000000002"
	fork := lsnAt(9*day+8*60+45) + 100
	first := h.log(9*day+10*60+45, lsnAt(9*day+8*60+45), fork+5000, forkA, forkB, false)
	first.ForkPointLSN = itoa(fork)
	for m, lsn := 9*day+11*60, fork+5000; m <= 9*day+14*60; m, lsn = m+15, lsn+5000 {
		h.log(m, lsn, lsn+5000, forkB, forkB, false)
	}
	c, err := plan.Build(h.sets, "Sales", h.at(9*day+12*60))
	if err != nil {
		t.Fatal(err)
	}
	var crossed bool
	for _, s := range c.Steps {
		if s.Set.UUID == first.UUID {
			crossed = true
		}
		if s.Kind == store.KindLog && s.Set.Start.After(h.at(9*day+8*60+45)) && s.Set.Start.Before(h.at(9*day+10*60+45)) {
			t.Errorf("the chain uses the abandoned branch's log of %v", s.Set.Start)
		}
	}
	if !crossed {
		t.Fatal("the chain does not follow the new fork")
	}
	notes := strings.Join(c.Notes, "\n")
	if !strings.Contains(notes, "recovery fork at LSN "+itoa(fork)) || !strings.Contains(notes, "7 log backups") {
		t.Errorf("notes %q", notes)
	}
	// Before the restore that forked it, the old branch is the history.
	c, err = plan.Build(h.sets, "Sales", h.at(9*day+10*60))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Steps {
		if s.Set.UUID == first.UUID {
			t.Fatal("a chain to 10:00 uses the fork taken at 10:45")
		}
	}
}

// STOPAT inside a log backup with bulk-logged changes fails on SQL Server:
// the plan says so.
func TestChainBulkLoggedStopAt(t *testing.T) {
	h := newHistory(2)
	for i := range h.sets {
		if h.sets[i].Type == "L" && h.sets[i].Start.Equal(h.at(day+60)) {
			h.sets[i].BulkLogged = true
		}
	}
	c, err := plan.Build(h.sets, "Sales", h.at(day+50))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(c.Notes, " "), "bulk-logged") {
		t.Errorf("notes %q", c.Notes)
	}
	c, _ = plan.Build(h.sets, "Sales", h.at(day+30))
	if strings.Contains(strings.Join(c.Notes, " "), "bulk-logged") {
		t.Errorf("a note for a log not stopped in: %q", c.Notes)
	}
}

// A dbatools -Raw export gives only last_recovery_fork_guid. When the log
// that would continue the chain ends on another fork and its own fork's
// log is missing, nothing proves it starts on this chain's fork: the plan
// stops before it and says why, instead of crossing into another branch
// (it did, silently).
func TestChainStopsBeforeAnUnprovenFork(t *testing.T) {
	h := newHistory(1)
	const forkB = "BBBBBBBB-0000-0000-0000-000000000002"
	var crossing time.Time
	for i := range h.sets {
		h.sets[i].FirstForkGUID = "" // the raw layout
		if s := &h.sets[i]; s.Type == "L" && s.Start.Equal(h.at(600)) {
			s.LastForkGUID, crossing = forkB, s.Finish
		}
	}
	at := h.at(900) // before the next day's differential, which would not need the crossing
	c, err := plan.Build(h.sets, "Sales", at)
	if err != nil {
		t.Fatal(err)
	}
	last := c.Steps[len(c.Steps)-1]
	if !last.Set.Finish.Before(crossing) || !c.Reaches.Equal(last.Set.Finish) || !last.Set.Start.Equal(h.at(585)) {
		t.Errorf("the chain reaches %v with the log of %v; want it to stop before the log that finished %v", c.Reaches, last.Set.Start, crossing)
	}
	if len(c.Notes) == 0 || !strings.Contains(strings.Join(c.Notes, "\n"), "cannot be proven to continue this chain's fork") {
		t.Errorf("no note says why the plan stops: %q", c.Notes)
	}
	// With the fork's start known (the msdb export), the same log is
	// simply another branch's: the chain does not take it either.
	h = newHistory(1)
	for i := range h.sets {
		if s := &h.sets[i]; s.Type == "L" && s.Start.Equal(h.at(600)) {
			s.FirstForkGUID, s.LastForkGUID = forkB, forkB
		}
	}
	if c, err := plan.Build(h.sets, "Sales", at); err == nil && c.Steps[len(c.Steps)-1].Set.Finish.After(crossing) {
		t.Errorf("the msdb layout crossed into fork B: %v", c.Reaches)
	}
}

// A restore over the database replaces it (issue 38): backups from before
// it cannot be chained with those after, an instant while it ran cannot be
// reached, and the plan of a later instant begins with the first full
// taken after it and says so. The history's LSNs run on across the restore
// (as they would for a copy restored from its own source's backups), so
// only the restore says where the chain must begin.
func TestChainBeginsAfterARestoreOverTheDatabase(t *testing.T) {
	h := newHistory(3)
	over := []plan.Overwrite{{RestoreID: 730, Start: h.at(day + 6*60), End: h.at(day + 8*60)}}

	// No full since the restore: no chain reaches past it.
	_, err := plan.BuildAfter(h.sets, "Sales", time.Time{}, over)
	if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "restore 730") ||
		!strings.Contains(err.Error(), "no usable full backup has been taken since") {
		t.Fatalf("no full after the restore: %v", err)
	}
	// Inside the restore: nothing reaches it.
	if _, err := plan.BuildAfter(h.sets, "Sales", h.at(day+7*60), over); err == nil || !strings.Contains(err.Error(), "was being restored over") {
		t.Errorf("an instant while the restore ran: %v", err)
	}
	// Before it: the history as it was, with no word of the restore.
	c, err := plan.BuildAfter(h.sets, "Sales", h.at(day+2*60), over)
	if err != nil || c.After != nil || !c.Steps[0].Set.Start.Equal(h.at(0)) || strings.Contains(strings.Join(c.Notes, " "), "restored over") {
		t.Errorf("before the restore: %v after=%v notes=%q", err, c.After, c.Notes)
	}

	// A full taken after it begins every later chain, and the plan says where.
	h.data("D", day+8*60+5, false)
	for _, at := range []time.Time{{}, h.at(2*day + 3*60)} {
		c, err := plan.BuildAfter(h.sets, "Sales", at, over)
		if err != nil {
			t.Fatalf("at %v: %v", at, err)
		}
		if !c.Steps[0].Set.Start.Equal(h.at(day+8*60+5)) || c.After == nil || c.After.RestoreID != 730 {
			t.Errorf("at %v: the chain begins with the backup of %v (after %+v), want the full taken after restore 730",
				at, c.Steps[0].Set.Start, c.After)
		}
		for _, s := range c.Steps {
			if s.Set.Start.Before(over[0].End) {
				t.Errorf("at %v: step %s of %v is from before the restore over the database", at, s.Kind, s.Set.Start)
			}
		}
		if len(c.Notes) == 0 || !strings.Contains(c.Notes[0], "restored over by restore 730") ||
			!strings.Contains(c.Notes[0], "the chain begins with the full backup of 2026-11-03 08:10:00 UTC") {
			t.Errorf("at %v: notes %q do not say where the chain begins", at, c.Notes)
		}
	}
	// Without the restore, the same history chains across it (the full
	// before it and a differential based on that full): the rule is what
	// keeps the plan honest.
	c, err = plan.Build(h.sets, "Sales", h.at(2*day+3*60))
	if err != nil || !c.Steps[0].Set.Start.Before(over[0].End) {
		t.Errorf("plain Build: %v, begins %v; the test's history no longer shows what the rule prevents", err, c.Steps[0].Set.Start)
	}
}
