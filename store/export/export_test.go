package export_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/export"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

func TestCellNeutralisesFormulas(t *testing.T) {
	for in, want := range map[string]string{
		"=cmd|' /C calc'!A0": "'=cmd|' /C calc'!A0",
		"+1":                 "'+1",
		"-2+3":               "'-2+3",
		"@SUM(A1)":           "'@SUM(A1)",
		"\tx":                "'\tx",
		"Billing":            "Billing",
		"":                   "",
	} {
		if got := export.Cell(in); got != want {
			t.Errorf("Cell(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCSVRowKeepsHostileNamesInert(t *testing.T) {
	dur := 12.5
	r := &store.Restore{ID: 7, Instance: "=HYPERLINK(\"http://x\")", Database: `O'Brien <script>, "Co"`, Kind: store.KindFull,
		At: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), DurationS: &dur, DurationSource: store.DurationEngine,
		Devices: []string{`\\nas\a.bak`, `\\nas\b.bak`}, DestinationFiles: []string{`=cmd|' /C calc'!A0`, `D:\Data\a.mdf`}}
	var buf bytes.Buffer
	w, err := export.NewCSVWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(export.Row(r, func(string) string { return "" })); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || len(recs[1]) != len(export.CSVHeader) {
		t.Fatalf("got %d records of %d fields", len(recs), len(recs[1]))
	}
	row := map[string]string{}
	for i, h := range recs[0] {
		row[h] = recs[1][i]
	}
	if row["instance"] != `'=HYPERLINK("http://x")` || row["database"] != `O'Brien <script>, "Co"` {
		t.Errorf("instance %q database %q", row["instance"], row["database"])
	}
	if row["destination_files"] != `'=cmd|' /C calc'!A0|D:\Data\a.mdf` {
		t.Errorf("destination_files %q", row["destination_files"])
	}
	if row["devices"] != `\\nas\a.bak|\\nas\b.bak` || row["duration_s"] != "12.5" {
		t.Errorf("devices %q duration %q", row["devices"], row["duration_s"])
	}
}

// TestTimesKeepTheirMilliseconds: three restores completed within one second
// keep distinct times, in the warehouse's order, in JSON and in CSV.
func TestTimesKeepTheirMilliseconds(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	im, err := db.NewImport(ctx, "errorlog", "ERRORLOG")
	if err != nil {
		t.Fatal(err)
	}
	off := 0
	base := time.Date(2024, 11, 1, 16, 27, 5, 0, time.UTC)
	for i, ms := range []int{140, 470, 910} {
		if err := im.LogRestore(store.LogRestore{Instance: "SQL01", Database: "DB" + strconv.Itoa(i), Kind: store.KindFull,
			MessageID: 18267, CompletedAt: base.Add(time.Duration(ms) * time.Millisecond), UTCOffset: &off, Has3014: true,
			Statement: "RESTORE DATABASE", Pages: 25378, Seconds: 0.499, MBps: 397.318,
			Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: i + 1}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := im.CommitAndReconcile(); err != nil {
		t.Fatal(err)
	}
	rs, _, err := db.ListRestores(ctx, store.RestoreFilter{Sort: "at", Asc: true})
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]export.RestoreRow, len(rs))
	for i := range rs {
		rows[i] = export.Row(&rs[i], nil)
	}
	want := []string{"2024-11-01T16:27:05.140Z", "2024-11-01T16:27:05.470Z", "2024-11-01T16:27:05.910Z"}

	var js bytes.Buffer
	if err := export.WriteJSON(&js, rows); err != nil {
		t.Fatal(err)
	}
	var back []struct {
		Database   string `json:"database"`
		At         string `json:"at"`
		FinishedAt string `json:"finished_at"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	var gotJSON []string
	for i, r := range back {
		gotJSON = append(gotJSON, r.At)
		if r.Database != "DB"+strconv.Itoa(i) || r.FinishedAt != r.At {
			t.Errorf("JSON row %d: %s finished %s at %s; want DB%d, finished at its time", i, r.Database, r.FinishedAt, r.At, i)
		}
	}
	if !slices.Equal(gotJSON, want) {
		t.Errorf("JSON times %v; want %v", gotJSON, want)
	}

	var buf bytes.Buffer
	w, err := export.NewCSVWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int { return slices.Index(recs[0], name) }
	var gotCSV, finished []string
	for _, rec := range recs[1:] {
		gotCSV = append(gotCSV, rec[col("at")])
		finished = append(finished, rec[col("finished_at")])
		if rec[col("throughput_source")] != store.ThroughputEngine {
			t.Errorf("CSV throughput_source %q; want %q", rec[col("throughput_source")], store.ThroughputEngine)
		}
	}
	if !slices.Equal(gotCSV, want) || !slices.Equal(finished, want) {
		t.Errorf("CSV at %v, finished_at %v; want %v", gotCSV, finished, want)
	}
	for _, s := range want {
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			t.Errorf("%s is not RFC 3339: %v", s, err)
		}
	}
}
