package export_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/export"
)

// TestRegressionFactorLabel: the JSON keeps the machine key of a changed
// factor and adds its words beside it.
func TestRegressionFactorLabel(t *testing.T) {
	r := &store.Regression{ID: 3, ChangedFactors: []store.FactorChange{
		{Factor: "source_build", Before: "13.0.4474.0", After: "13.0.5149.0", Score: 1},
		{Factor: "io_alignment", Before: "512", After: "4096", Score: 0.5},
	}}
	var buf bytes.Buffer
	if err := export.WriteJSON(&buf, []export.RegressionRow{export.Regression(r)}); err != nil {
		t.Fatal(err)
	}
	var got []struct {
		ChangedFactors []map[string]any `json:"changed_factors"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := []struct{ factor, label string }{
		{"source_build", "Source build (of the backup)"},
		{"io_alignment", "File-system I/O alignment (bytes)"},
	}
	if len(got) != 1 || len(got[0].ChangedFactors) != len(want) {
		t.Fatalf("got %s", buf.String())
	}
	for i, w := range want {
		f := got[0].ChangedFactors[i]
		if f["factor"] != w.factor || f["factor_label"] != w.label {
			t.Errorf("changed_factors[%d] = %v, want factor %q, factor_label %q", i, f, w.factor, w.label)
		}
	}
}
