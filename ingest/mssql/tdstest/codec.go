package tdstest

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"
	"time"
)

// Day arithmetic uses a proleptic Gregorian day count instead of
// time.Duration, which overflows after 292 years and cannot span
// 0001-01-01 to 9999-12-31.

// civilDays returns the number of days from 0001-01-01 to t's wall-clock
// date.
func civilDays(t time.Time) int {
	y := t.Year() - 1
	return y*365 + y/4 - y/100 + y/400 + t.YearDay() - 1
}

// days1900 is civilDays of 1900-01-01, the epoch of datetime.
const days1900 = 693595

const (
	nsPerDay    = int64(24 * time.Hour)
	ticksPerDay = 300 * 86400 // datetime ticks (1/300 s) per day
	maxDays     = 3652058     // civilDays of 9999-12-31
	minDTDays   = 639905      // civilDays of 1753-01-01, datetime's minimum
)

// nsOfDay is the time of day of t's wall clock in nanoseconds.
func nsOfDay(t time.Time) int64 {
	return int64(t.Hour())*int64(time.Hour) + int64(t.Minute())*int64(time.Minute) +
		int64(t.Second())*int64(time.Second) + int64(t.Nanosecond())
}

// encodeDateTime converts t's wall clock to datetime's (days since
// 1900-01-01, 1/300 s ticks since midnight), rounding to the nearest tick
// the way SQL Server converts to datetime: .123 stays .123 (37 ticks),
// .125 becomes .127, and 23:59:59.999 rolls over to the next day.
func encodeDateTime(t time.Time) (int32, uint32, error) {
	days := civilDays(t)
	ticks := (nsOfDay(t)*300 + 500_000_000) / 1_000_000_000
	if ticks >= ticksPerDay {
		ticks -= ticksPerDay
		days++
	}
	if days < minDTDays || days > maxDays || t.Year() < 1 {
		return 0, 0, fmt.Errorf("%s is outside datetime's range 1753-01-01..9999-12-31", t.Format(time.RFC3339Nano))
	}
	return int32(days - days1900), uint32(ticks), nil
}

// decodeDateTime converts datetime's parts to UTC, rounded to the
// millisecond as go-mssqldb does.
func decodeDateTime(days int32, ticks uint32) time.Time {
	ms := (int64(ticks)*10 + 1) / 3 // ticks/0.3 rounded half up
	return time.Date(1900, 1, 1+int(days), 0, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
}

// encodeDateTime2 converts t's wall clock to (days since 0001-01-01,
// 100 ns units since midnight), rounding half up to 100 ns.
func encodeDateTime2(t time.Time) (int, uint64, error) {
	days := civilDays(t)
	units := (nsOfDay(t) + 50) / 100
	if units >= nsPerDay/100 {
		units -= nsPerDay / 100
		days++
	}
	if t.Year() < 1 || days > maxDays {
		return 0, 0, fmt.Errorf("%s is outside datetime2's range 0001-01-01..9999-12-31", t.Format(time.RFC3339Nano))
	}
	return days, uint64(units), nil
}

// timeBytes is the length of a time part at the given scale (0..7).
func timeBytes(scale byte) int {
	switch {
	case scale <= 2:
		return 3
	case scale <= 4:
		return 4
	}
	return 5
}

// decodeTimeUnits converts a time part at scale (0..7) to a duration
// since midnight; false if it is a day or more, which SQL Server rejects.
func decodeTimeUnits(b []byte, scale byte) (time.Duration, bool) {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	perDay := uint64(86400)
	for range scale {
		perDay *= 10
	}
	if v >= perDay {
		return 0, false
	}
	for range 7 - int(scale) {
		v *= 10
	}
	return time.Duration(v * 100), true
}

// decodeDays reads a 3-byte day count since 0001-01-01 into a UTC date;
// false if it is after 9999-12-31.
func decodeDays(b []byte) (time.Time, bool) {
	d := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
	return time.Date(1, 1, 1+d, 0, 0, 0, 0, time.UTC), d <= maxDays
}

// parseNumeric returns v scaled by 10^scale as an integer, for
// numeric(p, s). Strings are exact decimal text; a string with more
// fraction digits than scale is refused rather than rounded, because canned
// test data should say exactly what it means.
func parseNumeric(v any, scale uint8) (*big.Int, error) {
	mul := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
	switch x := v.(type) {
	case *big.Int:
		if x == nil {
			return nil, fmt.Errorf("nil *big.Int")
		}
		return new(big.Int).Mul(x, mul), nil
	case big.Int:
		return new(big.Int).Mul(&x, mul), nil
	case string:
		return parseDecimalText(x, scale)
	case []byte:
		return parseDecimalText(string(x), scale)
	}
	if i, ok := toInt64(v); ok {
		return new(big.Int).Mul(big.NewInt(i), mul), nil
	}
	if u, ok := v.(uint64); ok {
		return new(big.Int).Mul(new(big.Int).SetUint64(u), mul), nil
	}
	return nil, fmt.Errorf("numeric needs an integer, *big.Int or decimal string, got %T", v)
}

func parseDecimalText(s string, scale uint8) (*big.Int, error) {
	t, neg := s, false
	if t != "" && (t[0] == '-' || t[0] == '+') {
		t, neg = t[1:], t[0] == '-'
	}
	ip, fp, _ := strings.Cut(t, ".")
	if len(fp) > int(scale) {
		return nil, fmt.Errorf("decimal %q has more than %d fraction digits", s, scale)
	}
	digits := ip + fp + strings.Repeat("0", int(scale)-len(fp))
	if digits == "" || strings.Trim(digits, "0123456789") != "" || (ip == "" && fp == "") {
		return nil, fmt.Errorf("bad decimal %q", s)
	}
	n, _ := new(big.Int).SetString(digits, 10)
	if neg {
		n.Neg(n)
	}
	return n, nil
}

// formatNumeric renders a scaled integer magnitude as decimal text.
func formatNumeric(mag *big.Int, neg bool, scale uint8) string {
	s := mag.String()
	if scale > 0 {
		if len(s) <= int(scale) {
			s = strings.Repeat("0", int(scale)-len(s)+1) + s
		}
		s = s[:len(s)-int(scale)] + "." + s[len(s)-int(scale):]
	}
	if neg && mag.Sign() != 0 {
		s = "-" + s
	}
	return s
}

// numericLen is the byte length of a numeric value of precision p:
// the sign byte plus 4, 8, 12 or 16 bytes of magnitude.
func numericLen(p uint8) int {
	switch {
	case p <= 9:
		return 5
	case p <= 19:
		return 9
	case p <= 28:
		return 13
	}
	return 17
}

// parseGUID accepts a GUID as text or as 16 bytes in RFC 4122 order.
func parseGUID(v any) ([16]byte, error) {
	var g [16]byte
	switch x := v.(type) {
	case [16]byte:
		return x, nil
	case []byte:
		if len(x) != 16 {
			return g, fmt.Errorf("uniqueidentifier needs 16 bytes, got %d", len(x))
		}
		copy(g[:], x)
		return g, nil
	case string:
		h := strings.ReplaceAll(strings.Trim(x, "{}"), "-", "")
		if len(h) != 32 || len(x) < 32 {
			return g, fmt.Errorf("bad uniqueidentifier %q", x)
		}
		if _, err := hex.Decode(g[:], []byte(h)); err != nil {
			return g, fmt.Errorf("bad uniqueidentifier %q", x)
		}
		return g, nil
	}
	return g, fmt.Errorf("uniqueidentifier needs a string or 16 bytes, got %T", v)
}

// swapGUID converts between RFC 4122 byte order and SQL Server's wire
// order, where the first three groups are little-endian. It is its own
// inverse.
func swapGUID(g [16]byte) [16]byte {
	g[0], g[1], g[2], g[3] = g[3], g[2], g[1], g[0]
	g[4], g[5] = g[5], g[4]
	g[6], g[7] = g[7], g[6]
	return g
}

// guidString formats wire-order GUID bytes the way SQL Server prints them.
func guidString(wire []byte) string {
	var g [16]byte
	copy(g[:], wire)
	g = swapGUID(g)
	h := strings.ToUpper(hex.EncodeToString(g[:]))
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// cp1252High maps bytes 0x80..0x9F of Windows-1252 (the code page of the
// Latin1_General collations) to runes; 0 marks the five unassigned bytes.
// Every other byte is the Latin-1 rune of the same value.
var cp1252High = [32]rune{
	0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
	0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
}

// encodeCP1252 encodes s for a char/varchar column; characters the code
// page lacks are an error, where SQL Server would silently store '?'.
func encodeCP1252(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
next:
	for _, r := range s {
		if r < 0x80 || (r >= 0xA0 && r <= 0xFF) {
			out = append(out, byte(r))
			continue
		}
		for i, h := range cp1252High {
			if h == r && h != 0 {
				out = append(out, byte(0x80+i))
				continue next
			}
		}
		return nil, fmt.Errorf("character %q is not in code page 1252", r)
	}
	return out, nil
}

// decodeCP1252 decodes Windows-1252 bytes; unassigned bytes become U+FFFD.
func decodeCP1252(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		switch {
		case c < 0x80 || c >= 0xA0:
			sb.WriteRune(rune(c))
		case cp1252High[c-0x80] != 0:
			sb.WriteRune(cp1252High[c-0x80])
		default:
			sb.WriteRune('\uFFFD')
		}
	}
	return sb.String()
}

// toInt64 converts any Go integer that fits in int64.
func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint:
		return int64(x), uint64(x) <= 1<<63-1
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		return int64(x), x <= 1<<63-1
	}
	return 0, false
}
