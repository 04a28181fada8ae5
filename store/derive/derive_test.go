package derive_test

import (
	"database/sql"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/derive"
)

// ms is a local wall time in Unix milliseconds, as facts carry it.
func ms(s string) int64 {
	t, err := time.Parse("2006-01-02 15:04:05.000", s)
	if err != nil {
		panic(err)
	}
	return t.UnixMilli()
}

func i64(v int64) sql.NullInt64     { return sql.NullInt64{Int64: v, Valid: true} }
func f64(v float64) sql.NullFloat64 { return sql.NullFloat64{Float64: v, Valid: true} }

// full is msdb's row of a full restore of Sales at 13:00:00.
func full(id, hid int64) derive.History {
	return derive.History{ID: id, HID: hid, RestoreLocal: ms("2023-11-24 13:00:00.000"), HistoryFacts: derive.HistoryFacts{
		DB: "Sales", RestoreType: "D", BackupType: "D", FirstLSN: "100", LastLSN: "200", BackupSize: i64(1 << 30),
		Devices: []string{`\\nas\sql\Sales.bak`}, Source: store.SourceHistory}}
}

// completion is the error log's completion line of that restore, 60 s of
// engine time later.
func completion(id int64) derive.Log {
	return derive.Log{ID: id, Source: store.SourceErrorLog, DB: "Sales", Kind: store.KindFull, MessageID: 18267,
		Completed: i64(ms("2023-11-24 13:01:00.000")), Offset: i64(60), FirstLSN: "100", LastLSN: "200",
		Has3014: true, Pages: i64(131072), Seconds: f64(60), MBps: f64(17.066)}
}

// TestDeriveWithoutADatabase: the facts of one restore (msdb's row, the
// error log's completion, a Restore-DbaDatabase row, a VERIFYONLY row) give
// one restore, timed by the engine, placed by the completion line in UTC.
func TestDeriveWithoutADatabase(t *testing.T) {
	verify := full(3, 12)
	verify.RestoreType = "V"
	dba := derive.Log{ID: 8, Source: store.SourceDbatools, DB: "sales", Kind: store.KindFull,
		Devices: []string{`\\NAS\sql\sales.bak`}, UpperBound: f64(61)}
	out := derive.Derive(&derive.Facts{History: []derive.History{full(1, 11), verify}, Logs: []derive.Log{completion(5), dba}})
	if len(out.Restores) != 1 || len(out.Untimed) != 0 {
		t.Fatalf("%d restores, untimed %v; want 1, none", len(out.Restores), out.Untimed)
	}
	d := out.Restores[0]
	r := d.Restore
	if d.Key != 1 || d.History.ID != 1 || d.Log.ID != 5 || d.Dbatools == nil || d.Dbatools.ID != 8 {
		t.Errorf("evidence: key %d, history %v, log %v, dbatools %v", d.Key, d.History, d.Log, d.Dbatools)
	}
	if r.DurationS == nil || *r.DurationS != 60 || r.DurationSource != store.DurationEngine {
		t.Errorf("duration %v from %q, want 60 s from the engine (dbatools' 61 s is only a bound)", r.DurationS, r.DurationSource)
	}
	if want := ms("2023-11-24 12:01:00.000"); d.AtUTC != want || !r.OffsetKnown {
		t.Errorf("at %d (offset known %v), want %d: the completion line's time less its +60 min", d.AtUTC, r.OffsetKnown, want)
	}
	if r.Sources != "history+errorlog+dbatools" || r.Kind != store.KindFull || r.DeviceKind != store.DeviceUNC {
		t.Errorf("sources %q, kind %q, device kind %q", r.Sources, r.Kind, r.DeviceKind)
	}
}

// TestDeriveMergesOneRestoreSeenTwice: a row without restore_history_id
// (dbatools' export, whole seconds) that repeats a row with it is one
// restore, cited by the row with the id; two rows that both have an id stay
// two restores.
func TestDeriveMergesOneRestoreSeenTwice(t *testing.T) {
	culture := full(2, -99) // a synthetic id: the source had none
	culture.RestoreLocal = ms("2023-11-24 13:00:00.000")
	culture.User = `CORP\svc`
	precise := full(1, 11)
	precise.RestoreLocal = ms("2023-11-24 13:00:00.437")
	out := derive.Derive(&derive.Facts{History: []derive.History{culture, precise}})
	if len(out.Restores) != 1 {
		t.Fatalf("%d restores, want 1", len(out.Restores))
	}
	if d := out.Restores[0]; d.Key != 1 || d.Restore.UserName != `CORP\svc` {
		t.Errorf("key %d, user %q: want the row with the id, with the user only the other states", d.Key, d.Restore.UserName)
	}
	twin := full(3, 12)
	out = derive.Derive(&derive.Facts{History: []derive.History{full(1, 11), twin}})
	if len(out.Restores) != 2 {
		t.Errorf("two rows with restore_history_id: %d restores, want 2", len(out.Restores))
	}
	other := full(2, -98)
	other.DB = "Billing"
	out = derive.Derive(&derive.Facts{History: []derive.History{full(1, -97), other}})
	if len(out.Restores) != 2 {
		t.Errorf("two databases in one second without ids: %d restores, want 2", len(out.Restores))
	}
}

// TestDeriveCountsWhatItCannotPlace: a Restore-DbaDatabase row whose backup
// files fit two history rows, or none, and client output without a time,
// become no restore and are counted by source; a row that fits one history
// row times it.
func TestDeriveCountsWhatItCannotPlace(t *testing.T) {
	a, b := full(1, 11), full(2, 12)
	b.RestoreLocal = ms("2023-11-25 13:00:00.000")
	b.FirstLSN, b.LastLSN = "300", "400"
	dba := derive.Log{ID: 7, Source: store.SourceDbatools, DB: "Sales", Kind: store.KindFull,
		Devices: []string{`\\nas\sql\Sales.bak`}, UpperBound: f64(42)}
	lost := dba
	lost.ID, lost.Devices = 8, []string{`\\nas\sql\Other.bak`}
	msg := derive.Log{ID: 9, Source: store.SourceMessages, DB: "Sales", Kind: store.KindLog, Has3014: true,
		Pages: i64(10), Seconds: f64(0.2)}
	out := derive.Derive(&derive.Facts{History: []derive.History{a, b}, Logs: []derive.Log{dba, lost, msg}})
	if len(out.Restores) != 2 || out.Untimed[store.SourceDbatools] != 2 || out.Untimed[store.SourceMessages] != 1 {
		t.Errorf("%d restores, untimed %v; want 2, dbatools 2, messages 1", len(out.Restores), out.Untimed)
	}
	for _, d := range out.Restores {
		if d.Restore.DurationS != nil {
			t.Errorf("restore %d timed %v s by an ambiguous row", d.Key, *d.Restore.DurationS)
		}
	}
	out = derive.Derive(&derive.Facts{History: []derive.History{a}, Logs: []derive.Log{dba}})
	if r := out.Restores[0].Restore; r.DurationS == nil || *r.DurationS != 42 || r.DurationSource != store.DurationDbatools || len(out.Untimed) != 0 {
		t.Errorf("one fit: duration %v from %q, untimed %v; want 42 s from dbatools", r.DurationS, r.DurationSource, out.Untimed)
	}
}
