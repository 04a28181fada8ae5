package export_test

import (
	"bytes"
	"encoding/csv"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/export"
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
