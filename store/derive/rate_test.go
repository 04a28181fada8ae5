package derive_test

import (
	"testing"

	"github.com/restorewatch/restorewatch/store"
)

// TestEngineRateAgrees checks stated MB/sec against pages and seconds with
// real 3014 lines (testdata/pasted/README.md and the reference notes §4).
func TestEngineRateAgrees(t *testing.T) {
	for _, tc := range []struct {
		pages         int64
		seconds, mbps float64
		want          bool
	}{
		{1169, 0.089, 102544, false}, // Alura course notes: the decimal point lost
		{1169, 0.089, 102.544, true}, // what the engine prints for it
		{337, 0.198, 13.264, true},
		{25378, 0.499, 397.318, true}, // finer clock than the seconds
		{2, 0.012, 1.057, true},       // a few pages: the engine's own figures stray
		{9, 0.020, 3.515, true},
		{45662, 5.130, 69.538, true},
		{0, 0.350, 0, true}, // METADATA_ONLY: nothing read
		{482, 0.028, 134.225, true},
		{482, 0.028, 13.4225, false}, // a digit moved
	} {
		if got := store.EngineRateAgrees(tc.pages, tc.seconds, tc.mbps); got != tc.want {
			t.Errorf("%d pages in %.3f s at %.3f MB/sec: agrees %v, want %v", tc.pages, tc.seconds, tc.mbps, got, tc.want)
		}
	}
}
