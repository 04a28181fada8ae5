package backups_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/backups"
)

// FuzzParse feeds arbitrary bytes after each fixture's header: the parser
// never panics, and every set it returns is valid and names no
// System.String[] path.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"export_sqlcmd.csv", "dbatools_raw_en-US.csv", "dbatools_raw_de-DE.csv", "dbatools_default.csv"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sets, _, err := backups.Parse(context.Background(), strings.NewReader(string(b)), backups.Options{File: "f.csv"})
		if err != nil {
			return
		}
		for i := range sets {
			s := sets[i]
			if err := s.Validate(); err != nil {
				t.Fatalf("set %d invalid: %v", i, err)
			}
			for _, m := range s.Media {
				if strings.HasPrefix(m.Device, "System.") && strings.HasSuffix(m.Device, "[]") {
					t.Fatalf("kept %q", m.Device)
				}
			}
		}
	})
}
