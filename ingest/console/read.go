package console

import (
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/restorewatch/restorewatch/ingest/unwrap"
)

// Layout is how PowerShell printed the objects.
type Layout string

// The two layouts PowerShell prints objects in.
const (
	List  Layout = "Format-List"
	Table Layout = "Format-Table"
)

// Record is one object as the console printed it.
type Record struct {
	Line   int      // the physical line it starts on (1-based)
	Layout Layout   // how it was printed
	Names  []string // its properties, in printed order
	// Values holds each property's text by its lower-case name: the
	// continuation lines of a wrapped value joined, the braces PowerShell
	// prints around a collection removed.
	Values map[string]string
	// Cut names the properties whose value the console cut short (a
	// Format-Table column's "..." or "…", a collection past
	// $FormatEnumerationLimit).
	Cut map[string]bool
}

// Get returns the value of property name (any case), "" when absent.
func (r *Record) Get(name string) string { return r.Values[strings.ToLower(name)] }

// Has reports whether the object printed property name (any case).
func (r *Record) Has(name string) bool {
	_, ok := r.Values[strings.ToLower(name)]
	return ok
}

func (r *Record) set(name, value string) {
	key := strings.ToLower(name)
	if _, ok := r.Values[key]; !ok {
		r.Names = append(r.Names, name)
	}
	r.Values[key] = value
}

var (
	// A Format-List line: the property name padded to the longest name of
	// the object, " : ", the value (PowerShell trims nothing from it, the
	// copy may have trimmed a trailing blank).
	reListLine = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)( *) :(?: (.*))?$`)
	// ANSI colours PowerShell 7 puts on table headers and list labels
	// ($PSStyle), kept by a copy from some terminals.
	reANSI = regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]")
	// A Format-Table header's underline: groups of dashes.
	reDashes = regexp.MustCompile(`^ *-+( +-+)* *$`)
	// The prompt and the console's own lines between objects.
	rePrompt = regexp.MustCompile(`^(PS [^>]*>|>>)`)
)

// Clean is the text of one console line: ANSI colours and the trailing
// blanks and CR removed.
func Clean(line string) string {
	if strings.IndexByte(line, 0x1b) >= 0 {
		line = reANSI.ReplaceAllString(line, "")
	}
	return strings.TrimRight(line, " \t\r\ufeff")
}

// Read cuts console lines into the objects PowerShell printed, in the
// order printed, as lists (Format-List, the default for objects of five
// properties or more) or tables (Format-Table). Lines that are neither
// (the prompt, WARNING: and VERBOSE: lines, the blank lines between
// objects) belong to no record.
func Read(lines []string) []Record {
	var strip unwrap.Stripper
	for i := range lines {
		// Pasted into Markdown or a web page: the fence, quote markers
		// and tags go, the line keeps its place (rejects cite it).
		switch t := strip.Line(Clean(lines[i])); len(t) {
		case 0:
			lines[i] = ""
		case 1:
			lines[i] = Clean(t[0])
		default:
			lines[i] = Clean(lines[i])
		}
	}
	tables := readTables(lines)
	inTable := map[int]bool{}
	for _, r := range tables {
		inTable[r.Line] = true
	}
	var out []Record
	for _, r := range readLists(lines) {
		if !inTable[r.Line] {
			out = append(out, r)
		}
	}
	out = append(out, tables...)
	slices.SortStableFunc(out, func(a, b Record) int { return a.Line - b.Line })
	return out
}

// readLists reads Format-List output: objects separated by blank lines,
// each a run of "Name : value" lines whose colons stand in one column, a
// long value wrapped onto lines indented to the value's column.
func readLists(lines []string) []Record {
	var out []Record
	var cur *Record
	colon, last := -1, ""
	width := widths(lines)
	for i, l := range lines {
		if strings.TrimSpace(l) == "" || rePrompt.MatchString(l) || isNote(l) {
			if cur != nil {
				out = append(out, *cur)
				cur = nil
			}
			continue
		}
		if g := reListLine.FindStringSubmatchIndex(l); g != nil && (cur == nil || g[5] == colon) {
			name := l[g[2]:g[3]]
			if cur == nil {
				cur = &Record{Line: i + 1, Layout: List, Values: map[string]string{}, Cut: map[string]bool{}}
				colon = g[5]
			}
			v := ""
			if g[6] >= 0 {
				v = l[g[6]:g[7]]
			}
			cur.set(name, v)
			last = name
			continue
		}
		if cur != nil && last != "" && len(l) > colon && strings.TrimSpace(l[:colon+1]) == "" {
			// A wrapped value: a break that filled the console's width
			// cut a word (a path), any other fell on a blank.
			prev := cur.Get(last)
			sep := " "
			if utf8.RuneCountInString(lines[i-1]) >= width[i] {
				sep = ""
			}
			cur.set(last, prev+sep+strings.TrimSpace(l))
			continue
		}
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	for i := range out {
		for _, n := range out[i].Names {
			v, cut := collection(out[i].Get(n))
			out[i].Values[strings.ToLower(n)] = v
			if cut {
				out[i].Cut[strings.ToLower(n)] = true
			}
		}
	}
	return out
}

// widths gives each line the console's width where it was printed: the
// widest line of its command's output (from one prompt to the next).
func widths(lines []string) []int {
	out := make([]int, len(lines))
	from, w := 0, 0
	for i := 0; i <= len(lines); i++ {
		if i == len(lines) || rePrompt.MatchString(lines[i]) {
			for j := from; j < i; j++ {
				out[j] = w
			}
			from, w = i, 0
			continue
		}
		w = max(w, utf8.RuneCountInString(lines[i]))
	}
	return out
}

// collection removes the braces PowerShell prints around a collection's
// items; cut reports items left out past $FormatEnumerationLimit.
func collection(v string) (string, bool) {
	if len(v) >= 2 && v[0] == '{' && v[len(v)-1] == '}' {
		v = v[1 : len(v)-1]
		for _, e := range []string{"...", "…"} {
			if strings.HasSuffix(v, e) {
				return strings.TrimSuffix(v, e), true
			}
		}
	}
	return v, false
}

// isNote is a line the console writes between results.
func isNote(l string) bool {
	for _, p := range []string{"WARNING:", "VERBOSE:", "DEBUG:", "INFORMATION:"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// readTables reads Format-Table output: a header line, its underline of
// dash groups (one per column: a column's cells stand under its dashes, up
// to the next column's), then one object per line until a blank line. With
// -Wrap a cell goes on over the lines after it, the other cells blank.
func readTables(lines []string) []Record {
	var out []Record
	for i := 1; i < len(lines); i++ {
		if !reDashes.MatchString(lines[i]) || strings.TrimSpace(lines[i-1]) == "" {
			continue
		}
		spans := dashSpans(lines[i])
		head := lines[i-1]
		names := make([]string, len(spans))
		ok := true
		for c, s := range spans {
			names[c] = strings.TrimSpace(cell(head, s))
			if names[c] == "" || strings.ContainsAny(names[c], " :") {
				ok = false
			}
		}
		if !ok {
			continue
		}
		// A column's width: its dashes up to the next column, the last
		// one's its widest cell. With -Wrap a piece that filled it was cut
		// inside a word (a path); any other broke at a blank.
		width := make([]int, len(spans))
		for c, s := range spans {
			width[c] = s.to - s.from - 1
		}
		for j := i + 1; j < len(lines) && strings.TrimSpace(lines[j]) != ""; j++ {
			last := len(spans) - 1
			width[last] = max(width[last], utf8.RuneCountInString(strings.TrimSpace(cell(lines[j], spans[last]))))
		}
		var cur *Record
		piece := make([]int, len(spans))
		for j := i + 1; j < len(lines); j++ {
			l := lines[j]
			if strings.TrimSpace(l) == "" || rePrompt.MatchString(l) || isNote(l) {
				i = j
				break
			}
			cells := make([]string, len(spans))
			for c, s := range spans {
				cells[c] = cell(l, s)
			}
			if cur != nil && strings.TrimSpace(cells[0]) == "" {
				for c, v := range cells {
					if v = strings.TrimSpace(v); v != "" {
						sep := " "
						if piece[c] >= width[c] {
							sep = ""
						}
						cur.set(names[c], cur.Get(names[c])+sep+v)
						piece[c] = utf8.RuneCountInString(v)
					}
				}
				continue
			}
			for c, v := range cells {
				piece[c] = utf8.RuneCountInString(strings.TrimSpace(v))
			}
			if cur != nil {
				out = append(out, *cur)
			}
			cur = &Record{Line: j + 1, Layout: Table, Values: map[string]string{}, Cut: map[string]bool{}}
			for c, v := range cells {
				cur.set(names[c], strings.TrimSpace(v))
			}
			i = j
		}
		if cur != nil {
			out = append(out, *cur)
		}
	}
	for i := range out {
		for _, n := range out[i].Names {
			key := strings.ToLower(n)
			v := out[i].Values[key]
			for _, e := range []string{"...", "…"} {
				if strings.HasSuffix(v, e) {
					out[i].Cut[key] = true
				}
			}
			v, cut := collection(v)
			out[i].Values[key] = v
			if cut {
				out[i].Cut[key] = true
			}
		}
	}
	return out
}

// span is a column: from its first dash to the next column's first dash
// (to is -1 for the last column, which runs to the line's end), in runes.
type span struct{ from, to int }

func dashSpans(l string) []span {
	var out []span
	r := []rune(l)
	for i := 0; i < len(r); i++ {
		if r[i] != '-' {
			continue
		}
		if n := len(out); n > 0 {
			out[n-1].to = i
		}
		out = append(out, span{i, -1})
		for i < len(r) && r[i] == '-' {
			i++
		}
	}
	return out
}

// cell is the text of line under column s, in runes, so that names and
// paths in any script line up as the console drew them.
func cell(line string, s span) string {
	r := []rune(line)
	if s.from >= len(r) {
		return ""
	}
	end := len(r)
	if s.to >= 0 {
		end = min(len(r), s.to)
	}
	return string(r[s.from:end])
}
