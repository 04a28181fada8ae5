package human

import (
	"math"
	"strconv"
)

// Hours writes a number of hours, as "hours lost a year" reads on the
// pages, in the report and in the command line: "45 min", "3.5 h",
// "2,090 h" (never days: hours lost compare with hours of work); "0 h" for
// nothing, a negative or a non-finite value.
func Hours(h float64) string {
	switch {
	case !(h > 0) || math.IsInf(h, 0):
		return "0 h"
	case h < 1:
		return strconv.FormatFloat(math.Round(h*60), 'f', 0, 64) + " min"
	case h < 10:
		return strconv.FormatFloat(h, 'f', 1, 64) + " h"
	}
	return itoa(int64(math.Round(h))) + " h"
}
