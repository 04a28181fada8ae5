package sqlite

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/derive"
	"github.com/restorewatch/restorewatch/store/row"
)

func hostileHistory() store.HistoryRow {
	i := func(v int64) *int64 { return &v }
	t, f := true, false
	at := time.Date(2024, 3, 9, 22, 15, 0, 0, time.UTC)
	return store.HistoryRow{
		Instance: "SQL01", RestoreHistoryID: 9, RestoreDate: at,
		Database: "Pay\"roll\\ <b>\n\t\x01é", UserName: `CORP\svc`, RestoreType: "d", Replace: &t, Recovery: &f,
		StopAt: &at, DeviceCount: i(2), BackupSetUUID: "6C1B0E1E-0000-4A8E-9E1B-000000000001", SourceServer: "SRC\u2028",
		SourceMachine: "M", SourceDatabase: "Payroll", BackupType: "l", BackupStart: &at, BackupFinish: &at,
		FirstLSN: "39000000100000001", LastLSN: "1000000000000000000000001", BackupSize: i(-1), CompressedSize: i(0),
		SoftwareMajor: i(16), SoftwareMinor: i(0), SoftwareBuild: i(4135), IsCopyOnly: &f, HasChecksums: &t,
		KeyAlgorithm: "aes_256", MediaFamilies: i(3), DeviceType: i(7),
		Devices:          []string{`\\nas\b "1".bak`, "", "https://acct.blob.core.windows.net/c/x.bak"},
		DestinationFiles: []string{`D:\data\p.mdf`},
		Origin:           store.Origin{Source: "history", File: "h.csv", Line: 2},
	}
}

// TestHistoryFactsRoundTrip: what appendHistoryFacts writes, decode reads
// back, SQLite's JSON functions accept, and a facts array with positions
// missing at its end (an older writer) reads as NULLs.
func TestHistoryFactsRoundTrip(t *testing.T) {
	h := hostileHistory()
	raw := string(row.AppendHistoryFacts(nil, &h))
	var f derive.HistoryFacts
	if err := row.DecodeHistoryFacts(&f, raw); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	ms := h.RestoreDate.UnixMilli()
	checks := []struct {
		name      string
		got, want any
	}{
		{"db", f.DB, h.Database}, {"user", f.User, h.UserName}, {"rtype", f.RestoreType, "D"}, {"backupType", f.BackupType, "L"},
		{"replace", f.Replace.Valid && f.Replace.Bool, true}, {"recovery", f.Recovery.Valid && !f.Recovery.Bool, true},
		{"stopAt", f.StopAt.Int64, ms}, {"deviceCount", f.DeviceCount.Int64, int64(2)}, {"uuid", f.UUID, h.BackupSetUUID},
		{"family", f.Family, ""}, {"srcServer", f.SourceServer, h.SourceServer}, {"srcMachine", f.SourceMachine, "M"},
		{"srcDB", f.SourceDB, "Payroll"}, {"start", f.BackupStart.Int64, ms}, {"finish", f.BackupFinish.Int64, ms},
		{"firstLSN", f.FirstLSN, h.FirstLSN}, {"lastLSN", f.LastLSN, h.LastLSN}, {"size", f.BackupSize.Int64, int64(-1)},
		{"compressed", f.Compressed, f.Compressed}, {"compressedValid", f.Compressed.Valid, true},
		{"build", [3]int64{f.Major.Int64, f.Minor.Int64, f.Build.Int64}, [3]int64{16, 0, 4135}},
		{"copyOnly", f.CopyOnly.Valid && !f.CopyOnly.Bool, true}, {"checksums", f.Checksums.Bool, true},
		{"keyAlg", f.KeyAlgorithm, "aes_256"}, {"families", f.MediaFamilies.Int64, int64(3)}, {"deviceType", f.DeviceType.Int64, int64(7)},
		{"devices", f.Devices, h.Devices}, {"destinations", f.Destinations, h.DestinationFiles}, {"source", f.Source, store.SourceHistory},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}

	db := openTestDB(t)
	var valid int
	var first, dev string
	if err := db.read.QueryRow(`SELECT json_valid(?), ? ->> 0, ? ->> '$[27][0]'`, raw, raw, raw).Scan(&valid, &first, &dev); err != nil {
		t.Fatal(err)
	}
	if valid != 1 || first != h.Database || dev != h.Devices[0] {
		t.Errorf("SQLite reads json_valid %d, [0] %q, [27][0] %q", valid, first, dev)
	}

	var short derive.HistoryFacts
	if err := row.DecodeHistoryFacts(&short, `["Old", "u" , "D"]`); err != nil || short.DB != "Old" || short.RestoreType != "D" || short.Devices != nil || short.Source != "" {
		t.Errorf("short array: %v %+v", err, short)
	}
	for _, bad := range []string{``, `{}`, `["a" "b"]`, `["a",`, `["a",x]`, `[1]`, `["a",null,null,2]`, `["a",null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,"x"]`, `["unterminated`} {
		var g derive.HistoryFacts
		if err := row.DecodeHistoryFacts(&g, bad); err == nil {
			t.Errorf("decode(%q) = nil error", bad)
		}
	}
}

// FuzzHistoryFacts: any text in any string field comes back as it went in
// (each invalid UTF-8 byte as U+FFFD, as encoding/json does), and
// decode never panics on what it is handed.
func FuzzHistoryFacts(f *testing.F) {
	f.Add("Payroll", `\\nas\b.bak`, `["x",1]`)
	f.Add("a\"b\\c\x00\xff", "\u2028", `[`)
	f.Fuzz(func(t *testing.T, db, dev, raw string) {
		var g derive.HistoryFacts
		_ = row.DecodeHistoryFacts(&g, raw)
		if want, _ := json.Marshal([]string{db}); row.StringsJSON([]string{db}) != string(want) {
			t.Errorf("row.StringsJSON(%q) = %s, json.Marshal %s", db, row.StringsJSON([]string{db}), want)
		}
		h := hostileHistory()
		h.Database, h.Devices = db, []string{dev}
		enc := string(row.AppendHistoryFacts(nil, &h))
		var got derive.HistoryFacts
		if err := row.DecodeHistoryFacts(&got, enc); err != nil {
			t.Fatalf("decode(%q): %v", enc, err)
		}
		if want := viaJSON(db); got.DB != want {
			t.Errorf("db %q, want %q", got.DB, want)
		}
		if want := viaJSON(dev); len(got.Devices) != 1 || got.Devices[0] != want {
			t.Errorf("devices %q, want %q", got.Devices, want)
		}
	})
}

// TestImportCommitsBehind: with batches committing in the background while
// the next is filled, every row lands once and the counts add up.
func TestImportCommitsBehind(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	for pass, want := range []int64{95, 0} {
		si, err := db.NewImport(ctx, "test", "t")
		if err != nil {
			t.Fatal(err)
		}
		im := si.(*Import)
		im.batchSize = 10
		for i := range 95 {
			h := hostileHistory()
			h.RestoreHistoryID = int64(i + 1)
			if err := im.History(h); err != nil {
				t.Fatal(err)
			}
		}
		sum, err := im.CommitAndReconcile()
		if err != nil {
			t.Fatal(err)
		}
		if sum.Read != 95 || sum.Added != want || sum.Duplicates != 95-want {
			t.Errorf("pass %d: %+v", pass, sum)
		}
	}
	var n int
	if err := db.read.QueryRow(`SELECT COUNT(*) FROM history_row`).Scan(&n); err != nil || n != 95 {
		t.Errorf("history rows %d (%v), want 95", n, err)
	}
}

// viaJSON is s after a round trip through encoding/json.
func viaJSON(s string) string {
	b, _ := json.Marshal(s)
	var out string
	_ = json.Unmarshal(b, &out)
	return out
}
