package mssql

import (
	"embed"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// The T-SQL of every source is in these files so that a DBA can read what
// restorewatch runs and paste it into SSMS. A query starts at a marker line
// "-- restorewatch:NAME [since N] [until N]" and runs to the next marker.
//
//go:embed *.sql
var sqlFS embed.FS

// PermissionsSQL is permissions.sql: the script that creates the collector's
// login with the minimal permissions (see its comments).
//
//go:embed permissions.sql
var PermissionsSQL string

// Marker starts every query the collector sends; test servers match on it.
const Marker = "-- restorewatch:"

type section struct {
	name         string
	since, until int // major versions; 0 = no bound
	text         string
}

var sections = mustLoadSections()

func mustLoadSections() []section {
	var out []section
	files, err := fs.Glob(sqlFS, "*.sql")
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		b, err := sqlFS.ReadFile(f)
		if err != nil {
			panic(err)
		}
		s, err := parseSections(string(b))
		if err != nil {
			panic(fmt.Sprintf("mssql: %s: %v", f, err))
		}
		out = append(out, s...)
	}
	return out
}

// parseSections splits a file at its marker lines; text before the first
// marker (the file's header comment) belongs to no query.
func parseSections(file string) ([]section, error) {
	var out []section
	var cur *section
	var b strings.Builder
	flush := func() {
		if cur != nil {
			cur.text = strings.TrimRight(b.String(), "\n") + "\n"
			out = append(out, *cur)
		}
		b.Reset()
	}
	for _, line := range strings.SplitAfter(file, "\n") {
		line = strings.TrimRight(line, "\r\n") + "\n"
		if strings.HasPrefix(line, Marker) && !strings.Contains(line, Marker+"since ") {
			flush()
			f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), Marker))
			if len(f) == 0 || len(f)%2 != 1 {
				return nil, fmt.Errorf("bad marker %q", strings.TrimSpace(line))
			}
			cur = &section{name: f[0]}
			for i := 1; i+1 < len(f); i += 2 {
				n, err := strconv.Atoi(f[i+1])
				if err != nil || (f[i] != "since" && f[i] != "until") {
					return nil, fmt.Errorf("bad marker %q", strings.TrimSpace(line))
				}
				if f[i] == "since" {
					cur.since = n
				} else {
					cur.until = n
				}
			}
		}
		if cur != nil {
			b.WriteString(line)
		}
	}
	flush()
	return out, nil
}

// query returns the text of the named query for an engine of major version
// major, with per-line gates applied. An unknown version (0) gets the
// variant for the oldest engine, which runs everywhere the query is
// supported.
func query(name string, major int) string {
	var best *section
	for i := range sections {
		s := &sections[i]
		if s.name != name {
			continue
		}
		if major == 0 {
			if best == nil || s.since < best.since {
				best = s
			}
			continue
		}
		if (s.since == 0 || major >= s.since) && (s.until == 0 || major <= s.until) {
			best = s
			break
		}
	}
	if best == nil {
		panic("mssql: no query " + name) // a programming error: names are constants
	}
	return gateLines(best.text, major)
}

// gateLines rewrites "… -- restorewatch:since N else X" lines: the part
// before the marker for engines N and later, X (with the line's indent)
// before that.
func gateLines(text string, major int) string {
	const gate = Marker + "since "
	if !strings.Contains(text, gate) {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	for i, line := range lines {
		j := strings.Index(line, gate)
		if j < 0 {
			continue
		}
		spec := strings.TrimSpace(line[j+len(gate):])
		num, alt, ok := strings.Cut(spec, " else ")
		n, err := strconv.Atoi(strings.TrimSpace(num))
		if !ok || err != nil {
			panic("mssql: bad gate " + spec)
		}
		if major >= n {
			lines[i] = strings.TrimRight(line[:j], " ") + "\n"
		} else {
			indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
			lines[i] = indent + strings.TrimSpace(alt) + "\n"
		}
	}
	return strings.Join(lines, "")
}

// QueryName returns the name in the marker that starts a query the collector
// sent ("restore_history/rows"), or "" for any other text.
func QueryName(sql string) string {
	if !strings.HasPrefix(sql, Marker) {
		return ""
	}
	line, _, _ := strings.Cut(sql[len(Marker):], "\n")
	name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
	return name
}
