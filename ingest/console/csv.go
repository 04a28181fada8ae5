package console

import (
	"bytes"
	"context"
	stdcsv "encoding/csv"
	"fmt"
	"strings"

	"github.com/restorewatch/restorewatch/ingest/csv"
	"github.com/restorewatch/restorewatch/store"
)

// needs are the properties without which an object of each command is no
// use, and cut is the advice when the console left one out or cut it.
var needs = map[Command][]string{
	// The date, database and kind place a history row; SqlInstance may
	// come from --instance.
	GetDbaDbRestoreHistory: {"Database", "RestoreType", "Date"},
	// FileRestoreTime times the statement; BackupFile pairs it with the
	// history row it times.
	RestoreDbaDatabase: {"Database", "BackupFile", "FileRestoreTime"},
}

var export = map[Command]string{
	GetDbaDbRestoreHistory: "Get-DbaDbRestoreHistory -SqlInstance SERVER | Export-Csv -Path restores.csv -NoTypeInformation",
	RestoreDbaDatabase:     "Restore-DbaDatabase ... | Export-Csv -Path restored.csv -NoTypeInformation",
}

// viaCSV hands the objects of one command to ingest/csv as the header and
// rows their Export-Csv would write, after rejecting those the console
// left a needed property out of or cut short. Lines are the console's.
func viaCSV(ctx context.Context, c Command, recs []Record, opt Options, sink store.Sink) error {
	if len(recs) == 0 {
		return nil
	}
	var cols []string
	seen := map[string]bool{}
	for _, r := range recs {
		for _, n := range r.Names {
			if k := strings.ToLower(n); !seen[k] {
				seen[k] = true
				cols = append(cols, n)
			}
		}
	}
	for _, n := range append(needs[c], "From") {
		if !seen[strings.ToLower(n)] && (n != "From" || c == GetDbaDbRestoreHistory) {
			cols = append(cols, n) // the csv reader knows the export by these
		}
	}
	var buf bytes.Buffer
	w := stdcsv.NewWriter(&buf)
	w.UseCRLF = false
	_ = w.Write(cols)
	lines := []int{0, 0} // CSV line -> console line
	for _, r := range recs {
		if why := unusable(c, &r); why != "" {
			sink.Reject(store.Reject{File: opt.File, Line: r.Line, Reason: why})
			continue
		}
		row := make([]string, len(cols))
		for i, n := range cols {
			if !r.Cut[strings.ToLower(n)] {
				row[i] = r.Get(n) // a cut value that is not needed is left out
			}
		}
		_ = w.Write(row)
		lines = append(lines, r.Line)
	}
	w.Flush()
	if len(lines) == 2 {
		return nil
	}
	_, err := csv.Parse(ctx, &buf, csv.Options{File: opt.File, Instance: opt.Instance, DateFormat: opt.DateFormat}, &relined{sink: sink, lines: lines})
	if err != nil {
		return fmt.Errorf("console: %s: %w", c, err)
	}
	return nil
}

// unusable says why an object cannot be read, "" when it can.
func unusable(c Command, r *Record) string {
	for _, n := range needs[c] {
		switch {
		case !r.Has(n):
			return fmt.Sprintf("%s's %s leaves out %s (Format-Table drops the columns that do not fit the console); not imported: "+
				"print it with Format-List, or export it: %s", c, r.Layout, n, export[c])
		case r.Cut[strings.ToLower(n)]:
			return fmt.Sprintf("%s's %s cut %s short (%q); not imported: print it with Format-List or Format-Table -Wrap, or export it: %s",
				c, r.Layout, n, r.Get(n), export[c])
		}
	}
	return ""
}

// relined puts the console's line numbers on what ingest/csv hands on.
type relined struct {
	sink  store.Sink
	lines []int
}

func (s *relined) line(n int) int {
	if n >= 0 && n < len(s.lines) {
		return s.lines[n]
	}
	return n
}

func (s *relined) History(h store.HistoryRow) error {
	h.Origin.Line = s.line(h.Origin.Line)
	return s.sink.History(h)
}

func (s *relined) LogRestore(l store.LogRestore) error {
	l.Origin.Line = s.line(l.Origin.Line)
	return s.sink.LogRestore(l)
}

func (s *relined) Host(h store.HostSnapshot) error   { return s.sink.Host(h) }
func (s *relined) BackupSet(b store.BackupSet) error { return s.sink.BackupSet(b) }
func (s *relined) Reject(r store.Reject) {
	r.Line = s.line(r.Line)
	s.sink.Reject(r)
}
