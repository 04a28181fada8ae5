package plan_test

import (
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/plan"
)

// stmt is one parsed RESTORE statement of a script.
type stmt struct {
	verb    string            // DATABASE or LOG
	db      string            // unquoted
	devices []string          // unquoted device paths
	options map[string]string // option name → value (unquoted), "" for flags
	moves   map[string]string // logical name → path
}

// parseScript reads a generated script the way SQL Server's parser would
// for the subset it uses: -- comments, GO batch separators, [ ]-quoted
// identifiers with ]] escapes, N' '-quoted strings with ” escapes.
func parseScript(t *testing.T, s string) []stmt {
	t.Helper()
	var toks []string
	for _, line := range strings.Split(s, "\n") {
		if strings.TrimSpace(line) == "GO" {
			toks = append(toks, ";")
			continue
		}
		for i := 0; i < len(line); {
			c := line[i]
			switch {
			case c == '-' && strings.HasPrefix(line[i:], "--"):
				i = len(line)
			case c == ' ' || c == '\t' || c == '\r':
				i++
			case c == ',' || c == '=' || c == ';':
				toks = append(toks, string(c))
				i++
			case c == '[':
				var b strings.Builder
				j := i + 1
				for ; j < len(line); j++ {
					if line[j] == ']' {
						if j+1 < len(line) && line[j+1] == ']' {
							b.WriteByte(']')
							j++
							continue
						}
						break
					}
					b.WriteByte(line[j])
				}
				if j >= len(line) {
					t.Fatalf("unclosed identifier in %q", line)
				}
				toks = append(toks, "ID:"+b.String())
				i = j + 1
			case c == 'N' && i+1 < len(line) && line[i+1] == '\'':
				var b strings.Builder
				j := i + 2
				for ; j < len(line); j++ {
					if line[j] == '\'' {
						if j+1 < len(line) && line[j+1] == '\'' {
							b.WriteByte('\'')
							j++
							continue
						}
						break
					}
					b.WriteByte(line[j])
				}
				if j >= len(line) {
					t.Fatalf("unclosed string in %q", line)
				}
				toks = append(toks, "STR:"+b.String())
				i = j + 1
			default:
				j := i
				for j < len(line) && (unicode.IsLetter(rune(line[j])) || unicode.IsDigit(rune(line[j])) || line[j] == '_') {
					j++
				}
				if j == i {
					t.Fatalf("unexpected %q in %q", c, line)
				}
				toks = append(toks, line[i:j])
				i = j
			}
		}
	}
	var out []stmt
	for len(toks) > 0 {
		if toks[0] == ";" {
			toks = toks[1:]
			continue
		}
		end := 0
		for end < len(toks) && toks[end] != ";" {
			end++
		}
		st := toks[:end]
		toks = toks[end:]
		if len(st) < 3 || st[0] != "RESTORE" || !strings.HasPrefix(st[2], "ID:") {
			t.Fatalf("not a RESTORE statement: %q", st)
		}
		r := stmt{verb: st[1], db: strings.TrimPrefix(st[2], "ID:"), options: map[string]string{}, moves: map[string]string{}}
		i := 3
		if i < len(st) && st[i] == "FROM" {
			for i++; ; i += 4 {
				if st[i] != "DISK" && st[i] != "URL" && st[i] != "TAPE" || st[i+1] != "=" || !strings.HasPrefix(st[i+2], "STR:") {
					t.Fatalf("bad device at %q", st[i:])
				}
				r.devices = append(r.devices, strings.TrimPrefix(st[i+2], "STR:"))
				if st[i+3] != "," {
					i += 3
					break
				}
			}
		}
		if st[i] != "WITH" {
			t.Fatalf("want WITH, got %q", st[i:])
		}
		for i++; i < len(st); i++ {
			name := st[i]
			switch {
			case name == "MOVE":
				if st[i+2] != "TO" {
					t.Fatalf("bad MOVE %q", st[i:])
				}
				r.moves[strings.TrimPrefix(st[i+1], "STR:")] = strings.TrimPrefix(st[i+3], "STR:")
				i += 3
			case i+1 < len(st) && st[i+1] == "=":
				r.options[name] = strings.TrimPrefix(st[i+2], "STR:")
				i += 2
			default:
				r.options[name] = ""
			}
			if i+1 < len(st) && st[i+1] != "," {
				t.Fatalf("want a comma after %s, got %q", name, st[i+1:])
			}
			i++
		}
		out = append(out, r)
	}
	return out
}

func TestScriptStructure(t *testing.T) {
	h := newHistory(2)
	const hostile = "a]b'c"
	off := 60
	for i := range h.sets {
		h.sets[i].Database = hostile
		h.sets[i].UTCOffset = &off
		if h.sets[i].Type == "D" {
			h.sets[i].Families = 2
			h.sets[i].Media = []store.BackupMedia{{Family: 2, DeviceType: 2, Device: `\\b\it's]2.bak`}, {Family: 1, DeviceType: 2, Device: `\\b\it's]1.bak`}}
			h.sets[i].Files = append(h.sets[i].Files, store.BackupFile{LogicalName: hostile, PhysicalName: `D:\Data\x'y.ndf`, Type: "D"})
		}
	}
	at := h.at(day + 2*60 + 7)
	c, err := plan.Build(h.sets, hostile, at)
	if err != nil {
		t.Fatal(err)
	}
	rates := []store.RestoreRate{{Instance: "SQL02", Kind: store.KindLog, DeviceKind: store.DeviceUNC, LogicalMiBps: 80, BufferCount: 7, MaxTransferKiB: 2048}}
	p := plan.Estimates(c, "SQL01", "SQL02", rates, 4*time.Hour)
	script := plan.Script(p, plan.ScriptOptions{DataPath: `E:\Restore\Data`, LogPath: "/var/opt/mssql/log"})
	got := parseScript(t, script)
	if len(got) != len(c.Steps)+1 {
		t.Fatalf("%d statements, want %d steps and the recovery:\n%s", len(got), len(c.Steps)+1, script)
	}
	seen := map[string]int{}
	for i, s := range got[:len(c.Steps)] {
		step := c.Steps[i]
		wantVerb := "DATABASE"
		if step.Kind == store.KindLog {
			wantVerb = "LOG"
		}
		if s.verb != wantVerb || s.db != hostile {
			t.Errorf("statement %d: RESTORE %s %q, want %s %q", i+1, s.verb, s.db, wantVerb, hostile)
		}
		if strings.Join(s.devices, "|") != strings.Join(step.Devices, "|") {
			t.Errorf("statement %d: devices %q, want %q", i+1, s.devices, step.Devices)
		}
		for _, d := range s.devices {
			seen[d]++
		}
		if _, ok := s.options["NORECOVERY"]; !ok {
			t.Errorf("statement %d lacks NORECOVERY", i+1)
		}
		if _, ok := s.options["RECOVERY"]; ok {
			t.Errorf("statement %d recovers", i+1)
		}
		if s.options["STATS"] != "10" {
			t.Errorf("statement %d: STATS %q", i+1, s.options["STATS"])
		}
		if _, ok := s.options["CHECKSUM"]; !ok {
			t.Errorf("statement %d lacks CHECKSUM", i+1)
		}
		if step.Kind == store.KindLog && (s.options["BUFFERCOUNT"] != "7" || s.options["MAXTRANSFERSIZE"] != "2097152") {
			t.Errorf("statement %d: buffers %q %q", i+1, s.options["BUFFERCOUNT"], s.options["MAXTRANSFERSIZE"])
		}
		stop, hasStop := s.options["STOPAT"]
		if last := i == len(c.Steps)-1; last != hasStop {
			t.Errorf("statement %d: STOPAT %v", i+1, hasStop)
		} else if last && stop != "2026-11-03T03:07:00.000" {
			t.Errorf("STOPAT %q, want the instant in the source's local time (UTC+1)", stop)
		}

		if i == 0 {
			want := map[string]string{"Sales": `E:\Restore\Data\Sales.mdf`, "Sales_log": "/var/opt/mssql/log/Sales_log.ldf",
				hostile: `E:\Restore\Data\x'y.ndf`}
			if len(s.moves) != len(want) {
				t.Errorf("moves %q", s.moves)
			}
			for k, v := range want {
				if s.moves[k] != v {
					t.Errorf("MOVE %q TO %q, want %q", k, s.moves[k], v)
				}
			}
		}
	}
	// The header says UTC; the STOPAT's comment says which zone it is in.
	if !strings.Contains(script, "-- STOPAT is 2026-11-03 02:07:00 UTC, written in the source server's local time (UTC+01:00 when the backup was taken)") {
		t.Errorf("no comment gives STOPAT's UTC instant and offset:\n%s", script)
	}
	for _, st := range c.Steps {
		for _, d := range st.Devices {
			if seen[d] != 1 {
				t.Errorf("device %q appears %d times", d, seen[d])
			}
		}
	}
	last := got[len(got)-1]
	if _, ok := last.options["RECOVERY"]; !ok || last.verb != "DATABASE" || len(last.devices) != 0 || last.db != hostile {
		t.Errorf("last statement %+v", last)
	}
	if got[0].devices[0] != `\\b\it's]1.bak` {
		t.Errorf("stripes out of order: %q", got[0].devices)
	}
}

// A name with a line break cannot end a comment line and smuggle T-SQL.
func TestScriptCommentsHoldNames(t *testing.T) {
	h := newHistory(1)
	name := "x\u2028DROP DATABASE master --"
	for i := range h.sets {
		h.sets[i].Database = name
	}
	c, err := plan.Build(h.sets, name, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range sqlcmdBatches(t, plan.Script(plan.Estimates(c, "A\nB", "T\rRESTORE", nil, 0), plan.ScriptOptions{})) {
		if s := tsql(t, b); s.database != name {
			t.Fatalf("statement %+v", s)
		}
	}
}

func TestQuote(t *testing.T) {
	if got := plan.QuoteName("a]b'c"); got != "[a]]b'c]" {
		t.Errorf("QuoteName %q", got)
	}
	if got := plan.QuoteString("a]b'c"); got != "N'a]b''c'" {
		t.Errorf("QuoteString %q", got)
	}
}
