package csv

import (
	"fmt"
	"strings"
	"time"
)

// PowerShell's Export-Csv writes a DateTime with its ToString(), that is in
// the exporting session's culture: the short date pattern and the long time
// pattern ("11/30/2026 1:45:12 PM" en-US, "30/11/2026 13:45:12" en-GB,
// "30.11.2026 13:45:12" de-DE, "2026/11/30 13:45:12" ja-JP), without the
// milliseconds and without an offset. Separators, padding, the 12- or
// 24-hour clock and the AM/PM designator read the same in every culture;
// only the order of day and month does not, and that comes from
// Options.DateFormat or from the file's own values.

// dateOrder is the order of day and month in a file's culture dates.
type dateOrder uint8

const (
	orderUnknown dateOrder = iota
	orderDMY
	orderMDY
	orderYMD
)

func (o dateOrder) String() string {
	switch o {
	case orderDMY:
		return "day/month/year"
	case orderMDY:
		return "month/day/year"
	case orderYMD:
		return "year/month/day"
	}
	return "unknown"
}

// CheckDateFormat reports whether s is a valid Options.DateFormat, so a
// command line can refuse a bad --date-format before reading any file.
func CheckDateFormat(s string) error {
	_, err := parseDateFormat(s)
	return err
}

// parseDateFormat checks a --date-format value and returns the order of day,
// month and year it gives. It accepts DMY, MDY or YMD; a .NET date pattern
// as PowerShell prints it ((Get-Culture).DateTimeFormat.ShortDatePattern,
// "dd.MM.yyyy", "M/d/yyyy", optionally followed by the time pattern); or a
// Go layout ("02/01/2006 15:04:05"). Only the order is taken from it: the
// separators, padding, clock and designator are read from each value.
func parseDateFormat(s string) (dateOrder, error) {
	f := strings.TrimSpace(s)
	switch strings.ToUpper(f) {
	case "":
		return orderUnknown, nil
	case "DMY":
		return orderDMY, nil
	case "MDY":
		return orderMDY, nil
	case "YMD":
		return orderYMD, nil
	}
	date := f
	if i := strings.IndexAny(date, " T"); i >= 0 {
		date = date[:i]
	}
	toks := strings.FieldsFunc(date, func(r rune) bool { return r == '/' || r == '.' || r == '-' })
	var order []byte
	for _, t := range toks {
		switch {
		case t == "2006" || t == "06" || strings.Trim(t, "y") == "" && t != "":
			order = append(order, 'Y')
		case t == "01" || t == "1" || t == "Jan" || t == "January" || strings.Trim(t, "M") == "" && len(t) <= 2:
			order = append(order, 'M')
		case t == "02" || t == "2" || t == "_2" || strings.Trim(t, "d") == "" && len(t) <= 2:
			order = append(order, 'D')
		default:
			return orderUnknown, fmt.Errorf("date format %q: %q is not a day, month or year (want DMY, MDY, YMD, a .NET pattern such as dd.MM.yyyy or a Go layout such as 02/01/2006)", s, t)
		}
	}
	switch string(order) {
	case "DMY":
		return orderDMY, nil
	case "MDY":
		return orderMDY, nil
	case "YMD":
		return orderYMD, nil
	}
	return orderUnknown, fmt.Errorf("date format %q: want day, month and year in the order DMY, MDY or YMD", s)
}

// cultureDate is a culture-formatted date and time as written: a and b are
// the date's first two numbers, whose meaning depends on the order.
type cultureDate struct {
	a, b, y              int
	ymd                  bool // the year came first (yyyy/MM/dd, yyyy-MM-dd)
	hour, min, sec, nsec int
}

// scanCultureDate reads "<n><sep><n><sep><n> <h>:<mm>:<ss>[.f][ AM|PM]" with
// sep one of / . - (the same twice), a four-digit year first or last, a
// fraction of up to 7 digits and an AM/PM designator (AM, PM, a.m., p.m.).
func scanCultureDate(f string) (cultureDate, bool) {
	var d cultureDate
	s := strings.TrimSpace(f)
	// .NET on ICU writes a narrow no-break space before the designator.
	s = strings.NewReplacer("\u202f", " ", "\u00a0", " ").Replace(s)
	n1, s, ok := number(s, 4)
	if !ok || len(s) == 0 {
		return d, false
	}
	sep := s[0]
	if sep != '/' && sep != '.' && sep != '-' {
		return d, false
	}
	n2, s, ok := number(s[1:], 2)
	if !ok || len(s) == 0 || s[0] != sep {
		return d, false
	}
	n3, s, ok := number(s[1:], 4)
	if !ok {
		return d, false
	}
	s = strings.TrimPrefix(s, ".") // hu-HU and others end the date with a dot
	switch {
	case n1.digits == 4 && n3.digits <= 2:
		d.ymd, d.y, d.a, d.b = true, n1.v, n2.v, n3.v
	case n3.digits == 4 && n1.digits <= 2:
		d.a, d.b, d.y = n1.v, n2.v, n3.v
	default:
		return d, false
	}
	if len(s) == 0 || (s[0] != ' ' && s[0] != 'T') {
		return d, false
	}
	s = strings.TrimLeft(s[1:], " ")
	h, s, ok := number(s, 2)
	if !ok || len(s) == 0 || s[0] != ':' {
		return d, false
	}
	m, s, ok := number(s[1:], 2)
	if !ok || m.digits != 2 || len(s) == 0 || s[0] != ':' {
		return d, false
	}
	sec, s, ok := number(s[1:], 2)
	if !ok || sec.digits != 2 {
		return d, false
	}
	d.hour, d.min, d.sec = h.v, m.v, sec.v
	if len(s) > 0 && (s[0] == '.' || s[0] == ',') {
		frac, rest, ok := number(s[1:], 7)
		if !ok {
			return d, false
		}
		d.nsec = frac.v
		for i := frac.digits; i < 9; i++ {
			d.nsec *= 10
		}
		s = rest
	}
	s = strings.TrimLeft(s, " ")
	if s != "" {
		switch strings.ToLower(strings.ReplaceAll(s, ".", "")) {
		case "am":
			if d.hour < 1 || d.hour > 12 {
				return d, false
			}
			d.hour %= 12
		case "pm":
			if d.hour < 1 || d.hour > 12 {
				return d, false
			}
			d.hour = d.hour%12 + 12
		default:
			return d, false
		}
	}
	if d.hour > 23 || d.min > 59 || d.sec > 59 || d.y < 1 {
		return d, false
	}
	return d, true
}

type num struct{ v, digits int }

// number reads 1 to max digits from the front of s.
func number(s string, max int) (num, string, bool) {
	var n num
	for n.digits < len(s) && n.digits < max && s[n.digits] >= '0' && s[n.digits] <= '9' {
		n.v = n.v*10 + int(s[n.digits]-'0')
		n.digits++
	}
	if n.digits == 0 || (n.digits < len(s) && s[n.digits] >= '0' && s[n.digits] <= '9') {
		return n, s, false
	}
	return n, s[n.digits:], true
}

// evidence returns the only order in which d is a real date, orderUnknown
// when both read as one (day and month both 12 or less) and ok false when
// neither does.
func (d cultureDate) evidence() (dateOrder, bool) {
	if d.ymd {
		return orderYMD, validDay(d.y, d.a, d.b)
	}
	dmy, mdy := validDay(d.y, d.b, d.a), validDay(d.y, d.a, d.b)
	switch {
	case dmy && mdy && d.a != d.b:
		return orderUnknown, true
	case dmy && mdy:
		return orderDMY, true // the same date either way
	case dmy:
		return orderDMY, true
	case mdy:
		return orderMDY, true
	}
	return orderUnknown, false
}

// ambiguous reports whether d reads as two different dates.
func (d cultureDate) ambiguous() bool {
	o, ok := d.evidence()
	return ok && o == orderUnknown
}

// resolve returns d read in the given order, as a wall-clock reading in a
// UTC location like parseDate's.
func (d cultureDate) resolve(o dateOrder) (time.Time, bool) {
	var y, m, day int
	switch {
	case d.ymd:
		y, m, day = d.y, d.a, d.b
	case o == orderYMD:
		return time.Time{}, false
	case o == orderDMY:
		y, m, day = d.y, d.b, d.a
	case o == orderMDY:
		y, m, day = d.y, d.a, d.b
	default:
		if d.a != d.b {
			return time.Time{}, false
		}
		y, m, day = d.y, d.a, d.b
	}
	if !validDay(y, m, day) {
		return time.Time{}, false
	}
	return time.Date(y, time.Month(m), day, d.hour, d.min, d.sec, d.nsec, time.UTC), true
}

func validDay(y, m, d int) bool {
	return m >= 1 && m <= 12 && d >= 1 && d <= daysIn(m, y)
}
