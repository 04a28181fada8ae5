package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTableFits: a table wider than the terminal leaves out its least
// needed columns, then cuts the widest cells with "…"; no line is wider
// than the terminal; --wide (width 0) prints every character (issue 30).
func TestTableFits(t *testing.T) {
	tb := newTable("INSTANCE", "DATABASE", "NOTE", "DEVICE")
	tb.drop = []int{3}
	tb.add(`RPT-SQL01\REPORTING`, "Billing", strings.Repeat("source build changed ", 6), "local")
	tb.add("DWH-SQL02", "DW_Sales", "no factor changed", "unc")
	var b strings.Builder
	cut, err := tb.write(&b, 60)
	if err != nil || !cut {
		t.Fatalf("cut %v, err %v", cut, err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 60 {
			t.Errorf("line of %d characters: %q", n, l)
		}
		if strings.Contains(l, "DEVICE") || strings.Contains(l, "local") {
			t.Errorf("the least needed column is still shown: %q", l)
		}
	}
	if !strings.HasPrefix(lines[1], `RPT-SQL01\REPORTING  Billing`) || !strings.HasSuffix(lines[1], "…") {
		t.Errorf("first row %q: names whole, the note cut with …", lines[1])
	}
	b.Reset()
	if cut, _ := tb.write(&b, 0); cut || !strings.Contains(b.String(), strings.Repeat("source build changed ", 5)) ||
		!strings.Contains(b.String(), "local") {
		t.Errorf("wide: cut %v\n%s", cut, b.String())
	}
}
