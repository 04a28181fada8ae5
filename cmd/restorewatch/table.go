package main

import (
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"
)

// table is a terminal table that fits a width: columns two spaces apart,
// and, when the rows are wider than the terminal, the least needed columns
// left out (drop, in order) and then the widest cut (each cut cell ends in
// "…") until the table fits. --wide prints every character instead.
type table struct {
	head []string
	rows [][]string
	// min is how narrow a column may be cut, by index: columns not named
	// keep at least minCol characters (or their header's width).
	min map[int]int
	// drop lists the columns to leave out first, least needed first.
	drop []int
}

// minCol is the narrowest a cut column gets: enough to recognise a name.
const minCol = 8

func newTable(head ...string) *table { return &table{head: head} }

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// write prints the table within width columns (0: no limit) and reports
// whether it cut any cell.
func (t *table) write(w io.Writer, width int) (cut bool, err error) {
	widths := make([]int, len(t.head))
	for _, r := range append([][]string{t.head}, t.rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	hidden := map[int]bool{}
	if width > 0 {
		for _, d := range t.drop {
			if span(widths) <= width {
				break
			}
			hidden[d], widths[d], cut = true, -2, true // -2: its gap goes too
		}
		cut = t.fit(widths, width) || cut
		// Still too wide at every column's narrowest: leave columns out
		// from the right (the first always stays) until it fits.
		for i := len(widths) - 1; i > 0 && span(widths) > width; i-- {
			if !hidden[i] {
				hidden[i], widths[i], cut = true, -2, true
			}
		}
	}
	var b strings.Builder
	for _, r := range append([][]string{t.head}, t.rows...) {
		b.Reset()
		for i, c := range r {
			if hidden[i] {
				continue
			}
			c = clip(c, widths[i])
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
		}
		b.WriteString("\n")
		if _, err := io.WriteString(w, strings.TrimRight(b.String(), " \n")+"\n"); err != nil {
			return cut, err
		}
	}
	return cut, nil
}

// fit narrows the widest columns, one character at a time, until the
// table fits width or every column is at its minimum.
func (t *table) fit(widths []int, width int) bool {
	total := func() int { return span(widths) }
	floor := make([]int, len(widths))
	for i := range widths {
		floor[i] = min(widths[i], max(minCol, utf8.RuneCountInString(t.head[i]))) // a left-out column stays at -2
		if m, ok := t.min[i]; ok {
			floor[i] = min(widths[i], m)
		}
	}
	cut := false
	for total() > width {
		widest := -1
		for i := range widths {
			if widths[i] > floor[i] && (widest < 0 || widths[i] > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		widths[widest]--
		cut = true
	}
	return cut
}

// span is the width of a table whose columns are widths wide, two spaces
// apart (a left-out column counts -2, taking its gap with it).
func span(widths []int) int {
	n := 2 * (len(widths) - 1)
	for _, w := range widths {
		n += w
	}
	return n
}

// clip cuts s to n characters, the last one "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(n-1, 0)]) + "…"
}

// terminalWidth is how many columns a table printed to out may use: the
// terminal's width, else $COLUMNS, else 0 (a pipe or file gets every
// character).
func terminalWidth(out *os.File) int {
	if w, _, err := term.GetSize(int(out.Fd())); err == nil && w > 0 {
		return w
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}

// printTable writes t to stdout within the terminal's width (every
// character with wide) and, when it cut a cell, says so on stderr.
func (m *Main) printTable(t *table, wide bool) error {
	width := m.Width
	if wide {
		width = 0
	}
	cut, err := t.write(m.Stdout, width)
	if err == nil && cut {
		_, err = io.WriteString(m.Stderr, "(fitted to "+strconv.Itoa(width)+" columns, some left out or cut with …: --wide shows everything)\n")
	}
	return err
}

// fitText fits printed prose and tables to width columns (0: as is): a
// line of sentences is wrapped at spaces with a two-space hanging indent;
// a table's line (indented, its columns two spaces apart) is cut, its
// last character "…". It reports whether it cut a line.
func fitText(s string, width int) (string, bool) {
	if width <= 0 {
		return s, false
	}
	var b strings.Builder
	cut := false
	for line := range strings.SplitSeq(strings.TrimSuffix(s, "\n"), "\n") {
		if utf8.RuneCountInString(line) <= width {
			b.WriteString(line + "\n")
			continue
		}
		if strings.HasPrefix(line, " ") && strings.Contains(strings.TrimSpace(line), "  ") {
			b.WriteString(clip(line, width) + "\n")
			cut = true
			continue
		}
		b.WriteString(wrap(line, width, "  "))
	}
	return b.String(), cut
}

// wrap breaks a line at spaces into lines of at most width characters, the
// lines after the first indented; a word longer than a line is cut.
func wrap(line string, width int, indent string) string {
	var b strings.Builder
	lead := len(line) - len(strings.TrimLeft(line, " "))
	indent = line[:lead] + indent
	cur, n := line[:lead], lead
	for _, w := range strings.Fields(line) {
		wn := utf8.RuneCountInString(w)
		if n > len(cur)-len(strings.TrimLeft(cur, " ")) && n+1+wn > width && strings.TrimSpace(cur) != "" {
			b.WriteString(strings.TrimRight(cur, " ") + "\n")
			cur, n = indent, len(indent)
		}
		if strings.TrimSpace(cur) != "" {
			cur += " "
			n++
		}
		if n+wn > width {
			w = clip(w, max(width-n, 1))
			wn = utf8.RuneCountInString(w)
		}
		cur += w
		n += wn
	}
	b.WriteString(strings.TrimRight(cur, " ") + "\n")
	return b.String()
}
