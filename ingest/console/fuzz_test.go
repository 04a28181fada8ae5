package console_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/console"
	"github.com/restorewatch/restorewatch/store"
)

// FuzzParse: any text parses without panic, every reject names a line of
// the text, and every record handed on validates or is a reject.
func FuzzParse(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("A : 1\n  b\nName : x\n---- --\nab cd\n")
	f.Fuzz(func(t *testing.T, text string) {
		var c store.Collect
		if _, err := console.Parse(context.Background(), strings.NewReader(text), console.Options{File: "f", Instance: "I"}, &c); err != nil {
			return
		}
		lines := strings.Count(text, "\n") + 1
		for _, r := range c.Rejects {
			if r.Line < 0 || r.Line > lines {
				t.Fatalf("reject at line %d of %d: %+v", r.Line, lines, r)
			}
		}
	})
}
