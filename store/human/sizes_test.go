package human_test

import (
	"math"
	"testing"

	"github.com/restorewatch/restorewatch/store/human"
)

// TestBytes: one size format for pages, report and command line, with
// thousands separated (issue 30: "1635.4 GiB" in the plan text).
func TestBytes(t *testing.T) {
	for in, want := range map[int64]string{0: "", -1: "", 512: "512 B", 1023: "1,023 B", 4096: "4.00 KiB",
		48 << 30: "48.0 GiB", 1635 << 30: "1.60 TiB", 400 << 40: "400 TiB", 1 << 62: "4,096 PiB"} {
		if got := human.Bytes(in); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", in, got, want)
		}
	}
}

// TestHours: hours lost read the same on the web and in the command line,
// in hours however many (issue 30: "87 d 2 h" beside "2,090 h").
func TestHours(t *testing.T) {
	for in, want := range map[float64]string{0: "0 h", -3: "0 h", math.Inf(1): "0 h", 0.5: "30 min", 3.46: "3.5 h",
		2090.4: "2,090 h", 12345: "12,345 h"} {
		if got := human.Hours(in); got != want {
			t.Errorf("Hours(%v) = %q, want %q", in, got, want)
		}
	}
}
