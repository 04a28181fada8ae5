package backups

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parseDate reads the dates an export carries: CONVERT(…, 121) ISO text
// from the published query, or a .NET DateTime as the exporting machine's
// culture prints it (en-US "11/2/2026 10:00:00 PM", en-GB "02/11/2026
// 22:00:00", de-DE "02.11.2026 22:00:00"). order ("dmy" or "mdy") settles
// which of the first two numbers is the day.
func parseDate(s, order string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, fmt.Errorf("empty")
	}
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05.999999999Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	date, clock, _ := strings.Cut(s, " ")
	sep := "/"
	if strings.Contains(date, ".") {
		sep, order = ".", "dmy"
	} else if strings.Contains(date, "-") {
		sep = "-"
	}
	parts := strings.Split(date, sep)
	if len(parts) != 3 {
		return time.Time{}, fmt.Errorf("%q is not a date", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil {
			return time.Time{}, fmt.Errorf("%q is not a date", s)
		}
		n[i] = v
	}
	day, month, year := n[0], n[1], n[2]
	switch {
	case len(parts[0]) == 4: // ja-JP and others: year/month/day
		year, month, day = n[0], n[1], n[2]
	case order != "dmy":
		day, month = n[1], n[0]
	}
	clock = strings.TrimSpace(clock)
	pm, am := false, false
	upper := strings.ToUpper(clock)
	if rest, ok := strings.CutSuffix(upper, "PM"); ok {
		pm, clock = true, strings.TrimSpace(rest)
	} else if rest, ok := strings.CutSuffix(upper, "AM"); ok {
		am, clock = true, strings.TrimSpace(rest)
	}
	var h, m int
	var sec float64
	cp := strings.Split(clock, ":")
	if len(cp) < 2 || len(cp) > 3 {
		return time.Time{}, fmt.Errorf("%q has no time of day", s)
	}
	var err1, err2 error
	h, err1 = strconv.Atoi(cp[0])
	m, err2 = strconv.Atoi(cp[1])
	if err1 != nil || err2 != nil {
		return time.Time{}, fmt.Errorf("%q has no time of day", s)
	}
	if len(cp) == 3 {
		v, err := strconv.ParseFloat(strings.Replace(cp[2], ",", ".", 1), 64)
		if err != nil || v < 0 || v >= 60 {
			return time.Time{}, fmt.Errorf("%q: bad seconds", s)
		}
		sec = v
	}
	if (am || pm) && (h < 1 || h > 12) {
		return time.Time{}, fmt.Errorf("%q: bad hour", s)
	}
	if pm && h != 12 {
		h += 12
	} else if am && h == 12 {
		h = 0
	}
	if month < 1 || month > 12 || day < 1 || day > 31 || year < 1753 || year > 9999 || h > 23 || m > 59 {
		return time.Time{}, fmt.Errorf("%q is out of range (read with the %s)", s, orderName(order))
	}
	t := time.Date(year, time.Month(month), day, h, m, 0, 0, time.UTC).Add(time.Duration(sec * float64(time.Second)))
	if t.Day() != day {
		return time.Time{}, fmt.Errorf("%q is not a calendar date", s)
	}
	return t, nil
}

func orderName(o string) string {
	if o == "dmy" {
		return "day first"
	}
	return "month first"
}

// decides says what one row's slash dates tell of their order: "dmy" when a
// first number is above 12, "mdy" when a second one is, "" when neither.
func decides(r row) string {
	for _, v := range []string{r.get("backup_start_date", "start"), r.get("backup_finish_date", "end")} {
		a, b, ok := slashParts(v)
		switch {
		case !ok:
		case a > 12:
			return "dmy"
		case b > 12:
			return "mdy"
		}
	}
	return ""
}

// ambiguous reports whether a row carries a slash date whose order matters
// (day and month differ, both 12 or less).
func ambiguous(r row) bool {
	for _, v := range []string{r.get("backup_start_date", "start"), r.get("backup_finish_date", "end")} {
		if a, b, ok := slashParts(v); ok && a != b {
			return true
		}
	}
	return false
}

func slashParts(v string) (a, b int, ok bool) {
	date, _, _ := strings.Cut(strings.TrimSpace(v), " ")
	p := strings.Split(date, "/")
	if len(p) != 3 || len(p[0]) == 4 {
		return 0, 0, false
	}
	a, err1 := strconv.Atoi(p[0])
	b, err2 := strconv.Atoi(p[1])
	return a, b, err1 == nil && err2 == nil
}

// dateOrder reads a --date-format as ingest/csv accepts it: DMY, MDY or
// YMD, a .NET pattern ("dd.MM.yyyy", "M/d/yyyy") or a Go layout
// ("02/01/2006"); only the order of day and month is taken from it.
func dateOrder(f string) (string, error) {
	f = strings.TrimSpace(f)
	switch strings.ToUpper(f) {
	case "":
		return "", nil
	case "DMY":
		return "dmy", nil
	case "MDY", "YMD":
		return "mdy", nil
	}
	d, m := strings.IndexByte(f, 'd'), strings.IndexByte(f, 'M')
	if d < 0 || m < 0 {
		d, m = strings.Index(f, "02"), strings.Index(f, "01")
	}
	switch {
	case d >= 0 && m >= 0 && d < m:
		return "dmy", nil
	case d >= 0 && m >= 0:
		return "mdy", nil
	}
	return "", fmt.Errorf("--date-format %q: want DMY, MDY, YMD, a .NET date pattern (dd.MM.yyyy) or a Go layout (02/01/2006)", f)
}
