package plan

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/human"
)

// ScriptOptions say where the restored files go and under which name.
type ScriptOptions struct {
	// Database is the name to restore as; empty = the original name.
	Database string
	// DataPath and LogPath are the folders for data and log files; empty =
	// DefaultData/DefaultLog, else the original physical names.
	DataPath, LogPath       string
	DefaultData, DefaultLog string
}

// Script writes the T-SQL of the plan, following the RESTORE syntax of
// "RESTORE Statements (Transact-SQL)" and "RESTORE Statements - Arguments
// (Transact-SQL)" (https://learn.microsoft.com/sql/t-sql/statements/restore-statements-transact-sql,
// https://learn.microsoft.com/sql/t-sql/statements/restore-statements-arguments-transact-sql):
// RESTORE DATABASE … FROM <device> [, …n] WITH MOVE … TO …, NORECOVERY, …
// for the data backups, RESTORE LOG … WITH NORECOVERY[, STOPAT] for the logs,
// and a last RESTORE DATABASE … WITH RECOVERY. Each statement is its own
// batch (GO) so that sqlcmd -b stops at the first failure.
func Script(p Plan, o ScriptOptions) string {
	var b strings.Builder
	db := p.Database
	if o.Database != "" {
		db = o.Database
	}
	fmt.Fprintf(&b, "-- Restore plan for database %s, from the backup history of %s, restoring on %s.\n",
		comment(p.Database), comment(p.Instance), comment(p.TargetInstance))
	if p.At.IsZero() {
		fmt.Fprintf(&b, "-- Target: the latest instant the backups reach, %s.\n", stamp(p.Reaches))
	} else {
		fmt.Fprintf(&b, "-- Target: %s.\n", stamp(p.At))
	}
	fmt.Fprintf(&b, "-- %d steps; expected %s", len(p.Steps), Duration(p.TotalS))
	if p.LowS > 0 {
		fmt.Fprintf(&b, " (%s to %s)", Duration(p.LowS), Duration(p.HighS))
	}
	if p.Unestimated > 0 {
		fmt.Fprintf(&b, " plus %d steps with no measurement", p.Unestimated)
	}
	b.WriteString(".\n")
	b.WriteString("-- Add REPLACE to the first statement to overwrite an existing database (take a tail-log backup first).\n")
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "-- Note: %s\n", comment(n))
	}
	for i, s := range p.Steps {
		b.WriteString("\n")
		fmt.Fprintf(&b, "-- Step %d of %d: %s backup finished %s, %s; expected %s (%s, n=%s).\n", i+1, len(p.Steps),
			kindWord(s.Kind), stamp(s.Set.Finish), bytes(s.Set.Size), Duration(s.Estimate.Seconds), comment(s.Estimate.Basis), human.Count(int64(s.Estimate.N)))
		buf, hasBuf := p.Buffers[s.DeviceKind]
		if hasBuf {
			fmt.Fprintf(&b, "-- BUFFERCOUNT %d and MAXTRANSFERSIZE %d KiB: the settings of %s's fastest measured restore from %s (%.1f MiB/s, %s).\n",
				buf.BufferCount, buf.MaxTransferKiB, comment(p.TargetInstance), deviceName(s.DeviceKind), buf.MiBps, buf.At.UTC().Format("2006-01-02"))
		}
		prefix := ""
		if s.DeviceKind == store.DeviceVirtual {
			b.WriteString("-- These backups were written through a virtual device (VDI): restore them with the tool that took them;\n" +
				"-- the statement is kept, commented out, to show the order.\n")
			prefix = "-- "
		}
		verb := "DATABASE"
		if s.Kind == store.KindLog {
			verb = "LOG"
		}
		var v batch
		name := v.name(db)
		var devs []string
		for _, d := range s.Devices {
			devs = append(devs, fmt.Sprintf("%s = %s", deviceClause(s.DeviceKind), v.value(d)))
		}
		var opts []string
		if s.Kind == store.KindFull {
			for _, f := range s.Set.Files {
				opts = append(opts, fmt.Sprintf("MOVE %s TO %s", v.value(f.LogicalName), v.value(movePath(f, o))))
			}
		}
		opts = append(opts, "NORECOVERY")
		if s.StopAt != nil {
			opts = append(opts, "STOPAT = "+QuoteString(stopAt(*s.StopAt, s.Set.UTCOffset)))
		}
		opts = append(opts, "STATS = 10")
		if s.Set.Checksums {
			opts = append(opts, "CHECKSUM")
		}
		if hasBuf {
			opts = append(opts, fmt.Sprintf("BUFFERCOUNT = %d", buf.BufferCount), fmt.Sprintf("MAXTRANSFERSIZE = %d", buf.MaxTransferKiB*1024))
		}
		v.declare(&b, prefix)
		fmt.Fprintf(&b, "%sRESTORE %s %s FROM %s\n", prefix, verb, name, strings.Join(devs, ", "))
		b.WriteString(prefix + "    WITH ")
		b.WriteString(strings.Join(opts, ",\n"+prefix+"         "))
		b.WriteString(";\n" + prefix + "GO\n")
		if s.Kind == store.KindFull && len(s.Set.Files) == 0 {
			b.WriteString("-- The history lists no files of this backup: run RESTORE FILELISTONLY on it and add MOVE for each file if the paths differ.\n")
		}
		if s.StopAt != nil {
			b.WriteString(stopAtNote(*s.StopAt, s.Set.UTCOffset))
		}
	}
	var v batch
	name := v.name(db)
	b.WriteString("\n")
	v.declare(&b, "")
	fmt.Fprintf(&b, "RESTORE DATABASE %s WITH RECOVERY;\nGO\n", name)
	return b.String()
}

// QuoteName quotes an identifier as QUOTENAME does: [name] with every ]
// doubled. Script writes a name that is not Plain through a variable.
func QuoteName(s string) string { return "[" + strings.ReplaceAll(s, "]", "]]") + "]" }

// QuoteString writes a Unicode string literal: N'text' with every ' doubled.
// Script writes a value that is not Plain as an expression (Literal).
func QuoteString(s string) string { return "N'" + strings.ReplaceAll(s, "'", "''") + "'" }

// A script is run by sqlcmd, SSMS in SQLCMD mode, Invoke-Sqlcmd or a
// line-based GO splitter. sqlcmd replaces $(name) anywhere in a batch,
// inside string literals and comments too (so a device path holding
// $(SQLCMDPASSWORD) would send the password to whoever owns the share, and
// an undefined $(x stops the script), and every splitter ends a batch at a
// line holding GO: a raw line break inside a literal would let a path
// carry a batch of its own. So no value reaches a script raw unless it is
// Plain; the others are written as N'…' runs and NCHAR(n) joined by +,
// through a DECLAREd variable where RESTORE takes only a literal or a
// variable (its device, MOVE, database name), and comments show such
// characters as code points, ⟨U+202E⟩, as the pages do.

// unsafe reports a character that must not appear raw in a script: a
// control or format character (bidi overrides, zero-width marks, the
// BOM), a line or paragraph separator, or the replacement of a byte that
// was not UTF-8.
func unsafe(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) || r == utf8.RuneError
}

// Plain reports whether s can be written raw inside a literal or a
// bracketed name: no unsafe character and no "$(".
func Plain(s string) bool {
	if strings.Contains(s, "$(") {
		return false
	}
	for _, r := range s {
		if unsafe(r) {
			return false
		}
	}
	return true
}

// Literal writes s as a T-SQL expression of type nvarchar that sqlcmd
// leaves alone: N'…' runs, with each unsafe character and each '$' before
// '(' as NCHAR(n) (a character beyond U+FFFF as its two UTF-16 halves),
// joined by +. A Plain s is QuoteString(s).
func Literal(s string) string {
	if Plain(s) {
		return QuoteString(s)
	}
	var parts []string
	var run strings.Builder
	flush := func() {
		if run.Len() > 0 {
			parts = append(parts, QuoteString(run.String()))
			run.Reset()
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r == '$' && i+1 < len(rs) && rs[i+1] == '(', unsafe(r):
			flush()
			if r > 0xFFFF {
				hi, lo := utf16.EncodeRune(r)
				parts = append(parts, fmt.Sprintf("NCHAR(%d)", hi), fmt.Sprintf("NCHAR(%d)", lo))
			} else {
				parts = append(parts, fmt.Sprintf("NCHAR(%d)", r))
			}
		default:
			run.WriteRune(r)
		}
	}
	flush()
	if len(parts) == 0 {
		return "N''"
	}
	return strings.Join(parts, " + ")
}

// batch collects the variables one statement needs for its values that
// are not Plain.
type batch struct{ decls []string }

// value is s as a literal, or the variable that holds it.
func (v *batch) value(s string) string {
	if Plain(s) {
		return QuoteString(s)
	}
	name := fmt.Sprintf("@v%d", len(v.decls)+1)
	v.decls = append(v.decls, fmt.Sprintf("DECLARE %s nvarchar(4000) = %s;", name, Literal(s)))
	return name
}

// name is the database name bracketed, or the variable that holds it.
func (v *batch) name(s string) string {
	if Plain(s) {
		return QuoteName(s)
	}
	v.decls = append(v.decls, fmt.Sprintf("DECLARE @db sysname = %s;", Literal(s)))
	return "@db"
}

// declare writes the batch's DECLAREs, each on its own line.
func (v *batch) declare(b *strings.Builder, prefix string) {
	for _, d := range v.decls {
		b.WriteString(prefix + d + "\n")
	}
}

// comment keeps a value inside a -- comment line: a line break in a name
// would end the comment and turn the rest into T-SQL, and sqlcmd would
// expand a $( there too. Unsafe characters are shown as code points.
func comment(s string) string {
	if Plain(s) {
		return s
	}
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r == '$' && i+1 < len(rs) && rs[i+1] == '(':
			b.WriteString("⟨U+0024⟩")
		case unsafe(r):
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func deviceClause(kind string) string {
	switch kind {
	case store.DeviceURL:
		return "URL"
	case store.DeviceTape:
		return "TAPE"
	}
	return "DISK"
}

// movePath is where a file goes: the file's name in the chosen folder, or
// its original path when no folder is known.
func movePath(f store.BackupFile, o ScriptOptions) string {
	dir := o.DataPath
	if dir == "" {
		dir = o.DefaultData
	}
	if f.Type == "L" {
		dir = o.LogPath
		if dir == "" {
			dir = o.DefaultLog
		}
	}
	if dir == "" {
		return f.PhysicalName
	}
	name := f.PhysicalName
	if i := strings.LastIndexAny(name, `\/`); i >= 0 {
		name = name[i+1:]
	}
	sep := `\`
	if strings.Contains(dir, "/") && !strings.Contains(dir, `\`) {
		sep = "/"
	}
	return strings.TrimRight(dir, `\/`) + sep + name
}

// stopAtNote is the comment under a STOPAT: the instant in UTC, as the
// plan's header gives it, and the offset that turned it into the source
// server's local time, which is how STOPAT reads it.
func stopAtNote(t time.Time, offset *int) string {
	if offset == nil {
		return fmt.Sprintf("-- STOPAT is %s UTC, written as UTC: SQL Server reads it in the source server's local time, whose offset the history does not give: check it.\n",
			t.UTC().Format("2006-01-02 15:04:05"))
	}
	o := *offset
	sign := "+"
	if o < 0 {
		sign, o = "-", -o
	}
	return fmt.Sprintf("-- STOPAT is %s UTC, written in the source server's local time (UTC%s%02d:%02d when the backup was taken), which is how SQL Server reads it.\n",
		t.UTC().Format("2006-01-02 15:04:05"), sign, o/60, o%60)
}

// stopAt writes the instant in the source server's local time, which is
// how STOPAT reads it.
func stopAt(t time.Time, offset *int) string {
	t = t.UTC()
	if offset != nil {
		t = t.Add(time.Duration(*offset) * time.Minute)
	}
	return t.Format("2006-01-02T15:04:05.000")
}

func kindWord(k store.Kind) string {
	switch k {
	case store.KindFull:
		return "full"
	case store.KindDiff:
		return "differential"
	}
	return "log"
}

// Duration formats seconds as everywhere else (human.Duration: "9 h 54 min",
// "14 min", "38 s"), "unknown" for no estimate.
func Duration(s float64) string {
	if !(s > 0) {
		return "unknown"
	}
	return human.Duration(s)
}

func bytes(n int64) string {
	if n <= 0 {
		return "size unknown"
	}
	return human.Bytes(n)
}
