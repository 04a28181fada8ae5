// Package console reads dbatools results as PowerShell prints them on a
// console and DBAs paste them: Format-List (PowerShell's default for
// objects of five properties or more, so what Restore-DbaDatabase and
// Get-DbaDbRestoreHistory print when nothing else is asked) and
// Format-Table, in any culture. Restore-DbaDatabase and
// Get-DbaDbRestoreHistory results are read as their Export-Csv would be
// (ingest/csv, the same columns and culture dates); Get-DbaDbBackupHistory's
// console view and Test-DbaLastBackup's results are rejected object by
// object, each with what it said, why it cannot be used and the export that
// can. Nothing is dropped without a line saying why.
package console

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/restorewatch/restorewatch/ingest/backups"
	"github.com/restorewatch/restorewatch/ingest/textenc"
	"github.com/restorewatch/restorewatch/store"
)

// Command is the dbatools command whose objects a console shows.
type Command string

// The commands whose console output restorewatch knows.
const (
	RestoreDbaDatabase     Command = "Restore-DbaDatabase"
	GetDbaDbRestoreHistory Command = "Get-DbaDbRestoreHistory"
	GetDbaDbBackupHistory  Command = "Get-DbaDbBackupHistory"
	TestDbaLastBackup      Command = "Test-DbaLastBackup"
)

// Classify names the command whose objects carry r's properties (from
// dbatools' source: Invoke-DbaAdvancedRestore's output object, the SELECT
// list of Get-DbaDbRestoreHistory, the BackupHistory type's table view,
// Test-DbaLastBackup's output object), "" for none.
func Classify(r *Record) Command {
	switch {
	case r.Has("SourceServer") && r.Has("TestServer") && (r.Has("RestoreResult") || r.Has("DbccResult")):
		return TestDbaLastBackup
	case r.Has("Database") && r.Has("BackupFile") && (r.Has("FileRestoreTime") || r.Has("DatabaseRestoreTime") || r.Has("RestoreComplete")):
		return RestoreDbaDatabase
	case r.Has("Database") && r.Has("RestoreType") && r.Has("Date"):
		return GetDbaDbRestoreHistory
	case r.Has("Database") && r.Has("Type") && r.Has("Start") && (r.Has("End") || r.Has("TotalSize") || r.Has("DeviceType")):
		return GetDbaDbBackupHistory
	}
	return ""
}

// Shape is what a console capture holds: the first command it shows, and
// how it was printed.
type Shape struct {
	Command Command
	Layout  Layout
}

// String names the shape for the import summary.
func (s Shape) String() string {
	return fmt.Sprintf("dbatools console output (%s of %s)", s.Layout, s.Command)
}

// Sniff tells whether the first bytes of a file (any encoding the importers
// read) are dbatools results printed on a console.
func Sniff(head []byte) (Shape, bool) {
	if !mentions(head) {
		return Shape{}, false // the common case, an error log or a CSV: no decoding
	}
	dec, err := textenc.UTF8Reader(bytes.NewReader(head))
	if err != nil {
		return Shape{}, false
	}
	text, _ := io.ReadAll(dec)
	recs := Read(strings.Split(string(text), "\n"))
	for i := range recs {
		if c := Classify(&recs[i]); c != "" {
			return Shape{Command: c, Layout: recs[i].Layout}, true
		}
	}
	return Shape{}, false
}

// keyNames are property names every command's console output shows one of
// (a Format-Table with chosen columns keeps Database and RestoreType or
// BackupFile), as bytes in UTF-8 and in the UTF-16LE that Windows
// PowerShell 5.1's ">" and Out-File write.
var keyNames = func() [][]byte {
	var out [][]byte
	for _, n := range []string{"SqlInstance", "SourceServer", "RestoreType", "BackupFile"} {
		out = append(out, []byte(n))
		u := make([]byte, 0, 2*len(n))
		for i := 0; i < len(n); i++ {
			u = append(u, n[i], 0)
		}
		out = append(out, u)
	}
	return out
}()

// mentions reports whether head holds one of keyNames: Sniff decodes and
// reads only such a file, so detecting a folder of error logs costs a
// few byte searches per file.
func mentions(head []byte) bool {
	for _, k := range keyNames {
		if bytes.Contains(head, k) {
			return true
		}
	}
	return false
}

// Options says where the text comes from and fills in what it lacks, as for
// ingest/csv.
type Options struct {
	File       string
	Instance   string // for objects that print no SqlInstance
	DateFormat string // the culture's day/month order (csv.Options.DateFormat)
}

// Stats counts what a parse read.
type Stats struct {
	Shape   Shape
	Records int64 // objects read
	Bytes   int64
}

// MaxBytes bounds a console capture: a paste, not an export.
const MaxBytes = 64 << 20

// Parse reads a console capture from r and hands what it can use to sink:
// Restore-DbaDatabase and Get-DbaDbRestoreHistory objects through ingest/csv,
// as their Export-Csv would be read, every other object as a store.Reject at
// the line it starts on, saying why and what to run instead.
func Parse(ctx context.Context, r io.Reader, opt Options, sink store.Sink) (Stats, error) {
	var st Stats
	cr := &textenc.CountingReader{R: io.LimitReader(r, MaxBytes+1)}
	dec, err := textenc.UTF8Reader(cr)
	if err != nil {
		return st, fmt.Errorf("console: read %s: %w", opt.File, err)
	}
	text, err := io.ReadAll(dec)
	st.Bytes = cr.N
	if err != nil {
		return st, fmt.Errorf("console: read %s: %w", opt.File, err)
	}
	if cr.N > MaxBytes {
		return st, store.Errorf(store.EINVALID, "console: %s: over %d MiB of console text: export the results with Export-Csv instead", opt.File, MaxBytes>>20)
	}
	recs := Read(strings.Split(string(text), "\n"))
	st.Records = int64(len(recs))
	byCmd := map[Command][]Record{}
	for i := range recs {
		c := Classify(&recs[i])
		if st.Shape.Command == "" && c != "" {
			st.Shape = Shape{Command: c, Layout: recs[i].Layout}
		}
		byCmd[c] = append(byCmd[c], recs[i])
	}
	reject := func(line int, why string) { sink.Reject(store.Reject{File: opt.File, Line: line, Reason: why}) }
	for _, r := range byCmd[""] {
		reject(r.Line, fmt.Sprintf("PowerShell %s of an object no dbatools command restorewatch reads prints (properties %s); not imported", r.Layout, names(r, 6)))
	}
	for _, r := range byCmd[GetDbaDbBackupHistory] {
		reject(r.Line, fmt.Sprintf("Get-DbaDbBackupHistory's console view has no LSNs and no backup files, which a restore plan needs; "+
			"not imported: export the raw rows instead (%s) and import that file (this one: %q)",
			backups.RawCommand, fmt.Sprintf("%s backup of %s started %s", r.Get("Type"), r.Get("Database"), r.Get("Start"))))
	}
	for _, r := range byCmd[TestDbaLastBackup] {
		reject(r.Line, lastBackupReason(&r))
	}
	for _, c := range []Command{GetDbaDbRestoreHistory, RestoreDbaDatabase} {
		if err := viaCSV(ctx, c, byCmd[c], opt, sink); err != nil {
			return st, err
		}
	}
	return st, nil
}

// lastBackupReason words a Test-DbaLastBackup result: its restore and DBCC
// times, and why they are no restore of the warehouse.
func lastBackupReason(r *Record) string {
	files := r.Get("BackupFiles")
	n := 0
	if strings.TrimSpace(files) != "" {
		n = strings.Count(files, ",") + 1
	}
	test := firstOf(r.Get("TestServer"), "the test server")
	return fmt.Sprintf("Test-DbaLastBackup's result is not imported as a restore: it times a whole chain restored under a temporary name and dropped, "+
		"on the client's clock; those restores are in the test server's restore history: "+
		"Get-DbaDbRestoreHistory -SqlInstance %s -Last | Export-Csv -Path restores.csv -NoTypeInformation, then import restores.csv (this test: %q)",
		test, fmt.Sprintf("%s from %s on %s: restore %s to %s (%s, %s), DBCC CHECKDB %s to %s (%s, %s), %d backup files",
			r.Get("Database"), firstOf(r.Get("SourceServer"), "?"), test,
			firstOf(r.Get("RestoreStart"), "?"), firstOf(r.Get("RestoreEnd"), "?"), firstOf(r.Get("RestoreElapsed"), "?"), firstOf(r.Get("RestoreResult"), "?"),
			firstOf(r.Get("DbccStart"), "?"), firstOf(r.Get("DbccEnd"), "?"), firstOf(r.Get("DbccElapsed"), "?"), firstOf(r.Get("DbccResult"), "?"), n))
}

func firstOf(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

func names(r Record, n int) string {
	if len(r.Names) <= n {
		return strings.Join(r.Names, ", ")
	}
	return strings.Join(r.Names[:n], ", ") + ", …"
}
