package messages_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/messages"
	"github.com/restorewatch/restorewatch/store"
)

// FuzzParseMessages checks that no input panics the parser, that rejects and
// restores point at a real line, and that every restore it emits is one the
// warehouse accepts.
func FuzzParseMessages(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c store.Collect
		st, err := messages.Parse(context.Background(), strings.NewReader(string(data)),
			messages.Options{File: "fuzz.txt", Instance: "S"}, &c)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		for _, r := range c.Rejects {
			if r.Line < 1 || int64(r.Line) > st.Lines || r.File != "fuzz.txt" || r.Reason == "" {
				t.Errorf("bad reject %+v (lines %d)", r, st.Lines)
			}
		}
		for _, l := range c.LogRestores {
			if err := l.Validate(); err != nil {
				t.Errorf("emitted invalid restore %+v: %v", l, err)
			}
			if l.Origin.Line < 1 || int64(l.Origin.Line) > st.Lines {
				t.Errorf("restore line %d of %d", l.Origin.Line, st.Lines)
			}
		}
		if st.Restores != int64(len(c.LogRestores)) {
			t.Errorf("stats say %d restores, sink got %d", st.Restores, len(c.LogRestores))
		}
	})
}
