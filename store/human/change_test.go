package human_test

import (
	"testing"

	"github.com/restorewatch/restorewatch/store/human"
)

// A narrow interval near one figure keeps a second decimal (issue 38:
// /compare's "B against A" read "1.0–1.0× slower").
func TestChangeRangeNarrow(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{0.96, 0.99, "1.01–1.04× slower"},
		{1.02, 1.04, "1.02–1.04× faster"},
		{0.2759, 0.3139, "3.2–3.6× slower"},
		{0.5, 0.5, "2.0–2.0× slower"},
	} {
		if got := human.ChangeRange(c.lo, c.hi); got != c.want {
			t.Errorf("ChangeRange(%v, %v) = %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}
