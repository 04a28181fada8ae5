package locale_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/locale"
)

// FuzzCanonical checks that no input panics Canonical or
// LooksLikeRestoreStat, that a recognised text comes out as English the
// English forms read back unchanged, and that a recognised text is never also
// an unrecognised statistic.
func FuzzCanonical(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(fixtures, "*.txt"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			f.Add(messageText(line))
		}
	}
	f.Add("RESTORE LOG 成功处理了 ４０ 页，花费 ０，０１０ 秒(３１，２５０ MB/秒)。")
	f.Fuzz(func(t *testing.T, s string) {
		en, lang, ok := locale.Canonical(s)
		stat := locale.LooksLikeRestoreStat(s)
		if !ok {
			if en != "" || lang != "" {
				t.Fatalf("not recognised but returned %q %q", en, lang)
			}
			return
		}
		if stat {
			t.Errorf("%q recognised and also reported as an unrecognised statistic", s)
		}
		if lang == locale.English {
			if en != s {
				t.Errorf("English input %q came back as %q", s, en)
			}
			return
		}
		again, l2, ok2 := locale.Canonical(en)
		if !ok2 || l2 != locale.English || again != en {
			t.Errorf("%q (%s) became %q, which the English forms read as %v %q %q", s, lang, en, ok2, l2, again)
		}
		m, _ := locale.Recognise(s)
		m2, _ := locale.Recognise(en)
		if m.Number != m2.Number {
			t.Errorf("%q is message %d but its English %q is message %d", s, m.Number, en, m2.Number)
		}
	})
}
