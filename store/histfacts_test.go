package store

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func hostileHistory() HistoryRow {
	i := func(v int64) *int64 { return &v }
	t, f := true, false
	at := time.Date(2024, 3, 9, 22, 15, 0, 0, time.UTC)
	return HistoryRow{
		Instance: "SQL01", RestoreHistoryID: 9, RestoreDate: at,
		Database: "Pay\"roll\\ <b>\n\t\x01é", UserName: `CORP\svc`, RestoreType: "d", Replace: &t, Recovery: &f,
		StopAt: &at, DeviceCount: i(2), BackupSetUUID: "6C1B0E1E-0000-4A8E-9E1B-000000000001", SourceServer: "SRC\u2028",
		SourceMachine: "M", SourceDatabase: "Payroll", BackupType: "l", BackupStart: &at, BackupFinish: &at,
		FirstLSN: "39000000100000001", LastLSN: "1000000000000000000000001", BackupSize: i(-1), CompressedSize: i(0),
		SoftwareMajor: i(16), SoftwareMinor: i(0), SoftwareBuild: i(4135), IsCopyOnly: &f, HasChecksums: &t,
		KeyAlgorithm: "aes_256", MediaFamilies: i(3), DeviceType: i(7),
		Devices:          []string{`\\nas\b "1".bak`, "", "https://acct.blob.core.windows.net/c/x.bak"},
		DestinationFiles: []string{`D:\data\p.mdf`},
		Origin:           Origin{Source: "history", File: "h.csv", Line: 2},
	}
}

// TestHistoryFactsRoundTrip: what appendHistoryFacts writes, decode reads
// back, SQLite's JSON functions accept, and a facts array with positions
// missing at its end (an older writer) reads as NULLs.
func TestHistoryFactsRoundTrip(t *testing.T) {
	h := hostileHistory()
	raw := string(appendHistoryFacts(nil, &h))
	var f historyFacts
	if err := f.decode(raw); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	ms := h.RestoreDate.UnixMilli()
	checks := []struct {
		name      string
		got, want any
	}{
		{"db", f.db, h.Database}, {"user", f.user, h.UserName}, {"rtype", f.rtype, "D"}, {"backupType", f.backupType, "L"},
		{"replace", f.replace.Valid && f.replace.Bool, true}, {"recovery", f.recovery.Valid && !f.recovery.Bool, true},
		{"stopAt", f.stopAt.Int64, ms}, {"deviceCount", f.deviceCount.Int64, int64(2)}, {"uuid", f.uuid, h.BackupSetUUID},
		{"family", f.family, ""}, {"srcServer", f.srcServer, h.SourceServer}, {"srcMachine", f.srcMachine, "M"},
		{"srcDB", f.srcDB, "Payroll"}, {"start", f.backupStart.Int64, ms}, {"finish", f.backupFinish.Int64, ms},
		{"firstLSN", f.firstLSN, h.FirstLSN}, {"lastLSN", f.lastLSN, h.LastLSN}, {"size", f.backupSize.Int64, int64(-1)},
		{"compressed", f.compressed, f.compressed}, {"compressedValid", f.compressed.Valid, true},
		{"build", [3]int64{f.major.Int64, f.minor.Int64, f.build.Int64}, [3]int64{16, 0, 4135}},
		{"copyOnly", f.copyOnly.Valid && !f.copyOnly.Bool, true}, {"checksums", f.checksums.Bool, true},
		{"keyAlg", f.keyAlg, "aes_256"}, {"families", f.mediaFamilies.Int64, int64(3)}, {"deviceType", f.deviceType.Int64, int64(7)},
		{"devices", f.devices, h.Devices}, {"destinations", f.destinations, h.DestinationFiles}, {"source", f.source, "history"},
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

	var short historyFacts
	if err := short.decode(`["Old", "u" , "D"]`); err != nil || short.db != "Old" || short.rtype != "D" || short.devices != nil || short.source != "" {
		t.Errorf("short array: %v %+v", err, short)
	}
	for _, bad := range []string{``, `{}`, `["a" "b"]`, `["a",`, `["a",x]`, `[1]`, `["a",null,null,2]`, `["a",null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,"x"]`, `["unterminated`} {
		var g historyFacts
		if err := g.decode(bad); err == nil {
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
		var g historyFacts
		_ = g.decode(raw)
		if want, _ := json.Marshal(db); string(appendJSONString(nil, db)) != string(want) {
			t.Errorf("appendJSONString(%q) = %s, json.Marshal %s", db, appendJSONString(nil, db), want)
		}
		h := hostileHistory()
		h.Database, h.Devices = db, []string{dev}
		enc := string(appendHistoryFacts(nil, &h))
		var got historyFacts
		if err := got.decode(enc); err != nil {
			t.Fatalf("decode(%q): %v", enc, err)
		}
		if want := viaJSON(db); got.db != want {
			t.Errorf("db %q, want %q", got.db, want)
		}
		if want := viaJSON(dev); len(got.devices) != 1 || got.devices[0] != want {
			t.Errorf("devices %q, want %q", got.devices, want)
		}
	})
}

// TestJSONStringMatchesEncodingJSON: the restore rows' devices text, whose
// content hash earlier versions stored, is written as json.Marshal wrote it.
func TestJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, ss := range [][]string{nil, {}, {""}, {`\\nas\b & <c>.bak`, "a\"b\b\f\n\r\t\x01\x7f", "\u2028\u2029é\xff\xfe", "https://x/y?z=1&w=2"}} {
		want, _ := json.Marshal(nonNil(ss))
		if got := stringsJSON(ss); got != string(want) {
			t.Errorf("stringsJSON(%q) = %s, json.Marshal %s", ss, got, want)
		}
	}
}

// viaJSON is s after a round trip through encoding/json.
func viaJSON(s string) string {
	b, _ := json.Marshal(s)
	var out string
	_ = json.Unmarshal(b, &out)
	return out
}

// TestImportCommitsBehind: with batches committing in the background while
// the next is filled, every row lands once and the counts add up.
func TestImportCommitsBehind(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	for pass, want := range []int64{95, 0} {
		im, err := db.NewImport(ctx, "test", "t")
		if err != nil {
			t.Fatal(err)
		}
		im.batchSize = 10
		for i := range 95 {
			h := hostileHistory()
			h.RestoreHistoryID = int64(i + 1)
			if err := im.History(h); err != nil {
				t.Fatal(err)
			}
		}
		sum, err := im.Close()
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

// FuzzFactString: the facts scanner reads any JSON string token as
// encoding/json does (invalid UTF-8, which no writer of facts produces, it
// passes through instead of replacing).
func FuzzFactString(f *testing.F) {
	for _, s := range []string{`"a"`, `"C:\\x\\y"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\u00e9\n\/"`, `"\ude00\ud83d x"`, `"a\"b"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		var want string
		werr := json.Unmarshal([]byte(tok), &want)
		if werr != nil || !strings.HasPrefix(tok, `"`) || !utf8.ValidString(tok) {
			return
		}
		p := factScanner{s: tok}
		got := p.quoted()
		if p.err != nil || got != want || p.i != len(strings.TrimRight(tok, " \t\r\n")) {
			t.Errorf("quoted(%q) = %q (err %v, at %d), encoding/json %q", tok, got, p.err, p.i, want)
		}
	})
}
