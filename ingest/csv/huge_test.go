package csv_test

import (
	"context"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/csv"
	"github.com/restorewatch/restorewatch/store"
)

// allocated returns the bytes f allocated: a count of allocations, so it
// does not depend on when the collector runs.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHugeLine streams 200 MB lines that were never written to disk (one
// bare line, one opening a quote that never closes, one of NUL bytes) and
// checks that each is rejected at its line, that the rows after it import,
// and that the parse allocates a bounded amount: holding the line whole
// allocated 1.6 GB (issue 12).
func TestHugeLine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fill  byte
		quote bool
	}{
		{"single-line", 'x', false},
		{"quoted-line", 'x', true},
		{"nul-filled", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c store.Collect
			var st csv.Stats
			var err error
			n := allocated(func() {
				st, err = csv.Parse(context.Background(), hugeInput(tc.fill, hugeLine, tc.quote), csv.Options{File: "huge.csv"}, &c)
			})
			if err != nil {
				t.Fatal(err)
			}
			var dbs []string
			for _, h := range c.Histories {
				dbs = append(dbs, h.Database)
			}
			if want := []string{"before", "after1", "after2"}; !reflect.DeepEqual(dbs, want) {
				t.Errorf("imported %v, want %v", dbs, want)
			}
			if len(c.Histories) == 3 && c.Histories[1].Origin.Line != 4 {
				t.Errorf("first row after the long line on line %d, want 4", c.Histories[1].Origin.Line)
			}
			if len(c.Rejects) != 1 || c.Rejects[0].Line != 3 || !strings.Contains(c.Rejects[0].Reason, "longer than 4 MiB") {
				t.Errorf("rejects = %v, want one at huge.csv:3 for its length", c.Rejects)
			}
			if st.Rows != 4 || st.Bytes < hugeLine {
				t.Errorf("rows = %d, bytes = %d", st.Rows, st.Bytes)
			}
			if n > 64<<20 {
				t.Errorf("parse allocated %d MiB, want a bounded record (under 64 MiB)", n>>20)
			}
		})
	}
}

// TestHugeFileWithoutHeader checks that 200 MB of NUL bytes and nothing
// else fails as a file without a header, without holding it.
func TestHugeFileWithoutHeader(t *testing.T) {
	var err error
	n := allocated(func() {
		_, err = csv.Parse(context.Background(), &filler{b: 0, n: hugeLine}, csv.Options{File: "nul.csv"}, &store.Collect{})
	})
	if err == nil || store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "no header row") {
		t.Errorf("err = %v, want an invalid file without a header", err)
	}
	if n > 64<<20 {
		t.Errorf("parse allocated %d MiB", n>>20)
	}
}

// TestOversizeMultiLine checks a long record that spans lines inside an
// unclosed quote: it is reported from its first line, and the rows after it
// keep their true line numbers.
func TestOversizeMultiLine(t *testing.T) {
	var b strings.Builder
	b.WriteString("instance,restore_date,destination_database_name\nS1,2024-01-02 03:04:05,before\n")
	b.WriteString(`S1,2024-01-02 03:04:05,"starts a quote` + "\n")
	line := strings.Repeat("y", 1023) + "\n"
	for b.Len() < csv.MaxRecord+1<<20 {
		b.WriteString(line)
	}
	lines := strings.Count(b.String(), "\n")
	b.WriteString("S1,2024-01-02 03:04:06,after\n")
	var c store.Collect
	if _, err := csv.Parse(context.Background(), strings.NewReader(b.String()), csv.Options{File: "m.csv"}, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Rejects) == 0 || c.Rejects[0].Line != 3 || !strings.Contains(c.Rejects[0].Reason, "longer than 4 MiB (lines 3-") {
		t.Fatalf("rejects = %v, want the record from line 3 first", c.Rejects)
	}
	last := c.Histories[len(c.Histories)-1]
	if c.Histories[0].Database != "before" || last.Database != "after" || last.Origin.Line != lines+1 {
		t.Errorf("first %q, last %q on line %d, want before and after on line %d", c.Histories[0].Database, last.Database, last.Origin.Line, lines+1)
	}
	// The quote's lines after the dropped part are rows of their own now,
	// each one rejected: none is lost or merged into the row after them.
	for _, r := range c.Rejects[1:] {
		if r.Line <= 3 || r.Line > lines || !strings.Contains(r.Reason, "fields") {
			t.Errorf("reject %s", r)
		}
	}
}

// TestRecordAtLimit checks that a record just under the limit is read whole.
func TestRecordAtLimit(t *testing.T) {
	name := strings.Repeat("n", csv.MaxRecord-100)
	in := "instance,restore_date,destination_database_name\nS1,2024-01-02 03:04:05," + name + "\nS1,2024-01-02 03:04:05,b\n"
	var c store.Collect
	if _, err := csv.Parse(context.Background(), io.MultiReader(strings.NewReader(in)), csv.Options{File: "l.csv"}, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Rejects) != 0 || len(c.Histories) != 2 || c.Histories[0].Database != name {
		t.Errorf("histories %d rejects %v", len(c.Histories), c.Rejects)
	}
}
