package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/store"
)

// TestPhaseBars: each phase gets a bar that ends at its total, and the
// file's own bar is ended once, before the first.
func TestPhaseBars(t *testing.T) {
	var out bytes.Buffer
	ended := 0
	p := &phaseBars{w: &out, before: func() { ended++ }}
	for i := 1; i <= 40; i++ {
		p.report(store.Progress{Phase: store.PhaseDerive, Done: i, Total: 40})
	}
	for i := 0; i <= 6; i++ {
		p.report(store.Progress{Phase: store.PhaseIndexes, Done: i, Total: 6})
	}
	p.report(store.Progress{Phase: store.PhaseAnalysing, Done: 40, Total: 40})
	p.finish()
	text := out.String()
	if ended != 1 {
		t.Errorf("the file's bar was ended %d times, want 1", ended)
	}
	for _, want := range []string{"deriving restores", "(40/40)", "building indexes", "(6/6)", "analysing"} {
		if !strings.Contains(text, want) {
			t.Errorf("bars %q lack %q", text, want)
		}
	}
	if !strings.HasSuffix(text, "\n") {
		t.Errorf("the last bar was not ended: %q", text[max(0, len(text)-40):])
	}
}
