package errorlog_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/errorlog"
	"github.com/restorewatch/restorewatch/ingest/unwrap"
	"github.com/restorewatch/restorewatch/store"
)

func parsePasted(t *testing.T, rel string) (*store.Collect, errorlog.Stats) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "pasted", rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var c store.Collect
	st, err := errorlog.Parse(context.Background(), f, errorlog.Options{File: filepath.Base(rel), Instance: "S"}, &c)
	if err != nil {
		t.Fatal(err)
	}
	return &c, st
}

// TestPastedLogWrappers: the same three lines of a Linux container's log,
// inside a GitHub issue's code fence and behind kubectl's stamps, give the
// same three log restores.
func TestPastedLogWrappers(t *testing.T) {
	for rel, wrapper := range map[string]string{
		"mssql-docker-690/issue690_fenced_errorlog.md": unwrap.Fence,
		"aks-sql01/kubectl_timestamps_errorlog.log":    unwrap.Stamps,
	} {
		c, st := parsePasted(t, rel)
		if len(c.Rejects) != 0 || len(c.LogRestores) != 3 {
			t.Errorf("%s: restores %d, rejects %v", rel, len(c.LogRestores), c.Rejects)
			continue
		}
		for i, l := range c.LogRestores {
			if l.Database != "db02" || l.Kind != store.KindLog || l.MessageID != 18268 {
				t.Errorf("%s: restore %d: %+v", rel, i, l)
			}
		}
		if len(st.Wrappers) != 1 || st.Wrappers[0] != wrapper {
			t.Errorf("%s: wrappers %q, want %q", rel, st.Wrappers, wrapper)
		}
	}
}

// TestUntimedRestoreLineRejected: KB 940126 quotes the log with "Date
// Time" for its stamps. The restore line is rejected at its line; before,
// the file read as "read 0, rejected 0".
func TestUntimedRestoreLineRejected(t *testing.T) {
	c, st := parsePasted(t, "kb940126/kb940126_placeholders.txt")
	if len(c.LogRestores) != 0 || len(c.Rejects) != 1 || c.Rejects[0].Line != 2 ||
		!strings.Contains(c.Rejects[0].Reason, "without a usable timestamp") || st.Rejects != 1 {
		t.Errorf("restores %+v rejects %v", c.LogRestores, c.Rejects)
	}
}
