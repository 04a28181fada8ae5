package csv_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/csv"
	"github.com/restorewatch/restorewatch/store"
)

// FuzzParseCSV checks that no input panics the parser, that every reject
// points at a real line, and that every row it emits is one the warehouse
// accepts.
func FuzzParseCSV(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.csv"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("instance,restore_date,destination_database_name\n\"S\",2024-01-02 03:04:05,\"a\nb\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c store.Collect
		_, err := csv.Parse(context.Background(), strings.NewReader(string(data)), csv.Options{File: "fuzz.csv"}, &c)
		if err != nil && store.ErrorCode(err) != store.EINVALID {
			t.Fatalf("unexpected error kind: %v", err)
		}
		lines := strings.Count(string(data), "\n") + 1
		for _, r := range c.Rejects {
			if r.Line < 1 || r.File != "fuzz.csv" || r.Reason == "" {
				t.Errorf("bad reject %+v", r)
			}
			// UTF-16 input has fewer "\n" bytes than lines only if it has
			// none at all; bound the line by the byte length then.
			if r.Line > lines && r.Line > len(data) {
				t.Errorf("reject line %d beyond the input's %d lines", r.Line, lines)
			}
		}
		for _, h := range c.Histories {
			if err := h.Validate(); err != nil {
				t.Errorf("emitted invalid row %+v: %v", h, err)
			}
			if h.Origin.Line < 1 {
				t.Errorf("row without a line: %+v", h)
			}
		}
	})
}

// FuzzParseDbatools runs dbatools exports (the fixtures, mutated) with a
// --date-format, and checks what FuzzParseCSV checks, for the log restores
// of Restore-DbaDatabase too.
func FuzzParseDbatools(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "realworld", "dbatools", "*.csv"))
	for i, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, []string{"", "DMY", "M/d/yyyy h:mm:ss tt", "2006-01-02"}[i%4])
	}
	f.Fuzz(func(t *testing.T, data []byte, format string) {
		var c store.Collect
		_, err := csv.Parse(context.Background(), strings.NewReader(string(data)), csv.Options{File: "fuzz.csv", DateFormat: format}, &c)
		if err != nil && store.ErrorCode(err) != store.EINVALID {
			t.Fatalf("unexpected error kind: %v", err)
		}
		for _, r := range c.Rejects {
			if r.Line < 1 || r.File != "fuzz.csv" || r.Reason == "" {
				t.Errorf("bad reject %+v", r)
			}
		}
		for _, h := range c.Histories {
			if err := h.Validate(); err != nil || h.Origin.Line < 1 {
				t.Errorf("emitted invalid row %+v: %v", h, err)
			}
		}
		for _, l := range c.LogRestores {
			if err := l.Validate(); err != nil || l.Origin.Line < 1 || l.UpperBoundS < 0 {
				t.Errorf("emitted invalid restore %+v: %v", l, err)
			}
		}
	})
}
