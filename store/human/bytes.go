package human

import "strconv"

// Bytes writes a size in binary units with three significant figures at
// most ("512 B", "4.00 KiB", "48.3 GiB", "1.60 TiB", "1,234 PiB"), the same
// on pages, in the report and in the command line; "" for a size that is
// not positive (callers say "unknown" in their own words).
func Bytes(n int64) string {
	if n <= 0 {
		return ""
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v, i = v/1024, i+1
	}
	switch {
	case i == 0:
		return itoa(n) + " B"
	case v < 10:
		return strconv.FormatFloat(v, 'f', 2, 64) + " " + units[i]
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[i]
	}
	return group(strconv.FormatFloat(v, 'f', 0, 64)) + " " + units[i]
}
