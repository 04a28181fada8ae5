package human_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/store/human"
)

func TestMatchNames(t *testing.T) {
	names := []string{"SQLPROD01", "SQLPROD02", "sqlprod01", "LS-SQL03", "Sales", "SALES", "SalesArchive", "Ärzte"}
	tests := []struct {
		text string
		want []string
	}{
		{"SQLPROD01", []string{"SQLPROD01"}},              // exact spelling wins alone
		{"SqlProd01", []string{"SQLPROD01", "sqlprod01"}}, // equal but for case: all of them
		{"sqlprod", []string{"SQLPROD01", "SQLPROD02", "sqlprod01"}},
		{"ls", []string{"LS-SQL03"}},
		{"sales", []string{"Sales", "SALES"}}, // equal beats prefix: not SalesArchive
		{"salesa", []string{"SalesArchive"}},
		{"ärz", []string{"Ärzte"}}, // case folding beyond ASCII
		{"NOPE", nil},
		{"SQLPROD011", nil}, // longer than every name
	}
	for _, tt := range tests {
		if got := human.MatchNames(tt.text, names); !slices.Equal(got, tt.want) {
			t.Errorf("human.MatchNames(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestClosest: names containing the text first, then by edit distance to
// the nearest beginning of the name, then to the whole name (in runes, case
// ignored), then by name.
func TestClosest(t *testing.T) {
	tests := []struct {
		text  string
		names []string
		want  []string
	}{
		{"prod", []string{"PROX", "SQLPROD01"}, []string{"SQLPROD01", "PROX"}},                         // contains beats a nearer spelling
		{"kitten", []string{"sitting", "kitchen", "mitten"}, []string{"mitten", "kitchen", "sitting"}}, // 1, 2, 3 edits
		{"sqlprod01", []string{"SQLPROD10", "SQLPROD02", "SQLPROD01X"}, []string{"SQLPROD01X", "SQLPROD02", "SQLPROD10"}},
		{"ärzte", []string{"Borte", "arzte"}, []string{"arzte", "Borte"}}, // one rune, not two bytes
		{"b", []string{"c", "a"}, []string{"a", "c"}},                     // ties by name
		// A typed start of a name is near it, however long the rest (issue 30).
		{"RPT-SQL1", []string{"ARCH-SQL12", "SQLPROD10", `RPT-SQL08\REPORTING`, "DEV-SQL09", `RPT-SQL01\REPORTING`},
			[]string{`RPT-SQL01\REPORTING`, `RPT-SQL08\REPORTING`, "ARCH-SQL12", "DEV-SQL09", "SQLPROD10"}},
		{"", nil, []string{}},
	}
	for _, tt := range tests {
		if got := human.Closest(tt.text, tt.names); !slices.Equal(got, tt.want) {
			t.Errorf("Closest(%q, %q) = %q, want %q", tt.text, tt.names, got, tt.want)
		}
	}
}

// TestNoMatchListsClosestFirst: the command line's error and the
// dashboard's notice list what exists, closest first, every name of a few
// and the closest ten of many; several matches ask for more of the name.
func TestNoMatchListsClosestFirst(t *testing.T) {
	few := []string{"ERP-SQL07", "SQLPROD10", "LS-SQL03"}
	if got, want := human.NoMatch("instance", "instances", "SQLPROD1", "", nil, few), "no instance SQLPROD1; instances: SQLPROD10, LS-SQL03, ERP-SQL07"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got, want := human.NoMatch("database", "databases", "x", " on A", nil, nil), "no database x on A; there are no databases"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	var many []string
	for i := range 200 {
		many = append(many, fmt.Sprintf("HOST%03d", i))
	}
	got := human.NoMatch("instance", "instances", "HOST17Z", "", nil, many)
	if !strings.HasPrefix(got, "no instance HOST17Z; closest of the 200 instances: HOST170, HOST171, HOST172") ||
		strings.Count(got, "HOST") != 1+10 || !strings.HasSuffix(got, ", …") {
		t.Errorf("got %q", got)
	}
	if got, want := human.NoMatch("instance", "instances", "SQLP", "", []string{"SQLPROD10", "SQLPROD11"}, many),
		"no single instance matches SQLP: it begins 2 names (SQLPROD10, SQLPROD11); type more of the one you mean"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	// Control characters in what the user typed or in names never reach the terminal.
	if got := human.NoMatch("instance", "instances", "a\x1b[2Jb", "", nil, []string{"x\x07y"}); strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("got %q", got)
	}
}
