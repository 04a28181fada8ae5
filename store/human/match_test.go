package human_test

import (
	"slices"
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
