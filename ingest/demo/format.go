package demo

import (
	"strconv"
	"time"
)

// Hand-written formatting: a million restores write tens of millions of
// timestamps, and time.Format's generality shows up in the profile.

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func append2(b []byte, v int) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }

// appendDate appends "2006-01-02 15:04:05".
func appendDate(b []byte, t time.Time) []byte {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	b = append2(b, y/100)
	b = append2(b, y%100)
	b = append(b, '-')
	b = append2(b, int(mo))
	b = append(b, '-')
	b = append2(b, d)
	b = append(b, ' ')
	b = append2(b, h)
	b = append(b, ':')
	b = append2(b, mi)
	b = append(b, ':')
	return append2(b, s)
}

// appendLogStamp appends the error log's "2006-01-02 15:04:05.00": the file
// has centiseconds, truncated.
func appendLogStamp(b []byte, t time.Time) []byte {
	b = appendDate(b, t)
	b = append(b, '.')
	return append2(b, t.Nanosecond()/10_000_000)
}

// datetime rounds to SQL Server's datetime precision (1/300 s), which is
// what msdb's restore_date and backup dates hold: milliseconds end in 0, 3
// or 7.
func datetime(t time.Time) time.Time {
	ms := t.UnixMilli()
	ticks := (ms*3 + 5) / 10
	return time.UnixMilli((ticks*10 + 1) / 3).UTC()
}

// csvDate formats a local wall time for the history CSV: datetime precision,
// "2006-01-02 15:04:05.000".
func csvDate(t time.Time) string {
	t = datetime(t)
	b := appendDate(make([]byte, 0, 23), t)
	ms := t.Nanosecond() / 1_000_000
	return string(append(b, '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10)))
}

// offsetText is the error log's "UTC adjustment" value: -5:00, 0:00, 5:30.
func offsetText(minutes int) string {
	sign := ""
	if minutes < 0 {
		sign, minutes = "-", -minutes
	}
	return sign + strconv.Itoa(minutes/60) + ":" + string(append2(nil, minutes%60))
}

// ssmsCompletion is SSMS's "Completion time" stamp: local time with seven
// fractional digits and the client's offset.
func ssmsCompletion(local time.Time, minutes int) string {
	b := appendDate(nil, local)
	b[10] = 'T'
	frac := local.Nanosecond() / 100
	b = append(b, '.')
	for d := 1_000_000; d > 0; d /= 10 {
		b = append(b, byte('0'+frac/d%10))
	}
	sign := byte('+')
	if minutes < 0 {
		sign, minutes = '-', -minutes
	}
	b = append(b, sign)
	b = append2(b, minutes/60)
	b = append(b, ':')
	return string(append2(b, minutes%60))
}

// mbps is the engine's MB/sec of message 3014: pages × 8192 / 2^20 / seconds.
func mbps(pages, ms int64) string {
	v := float64(pages) * 8192 / (1 << 20) / (float64(ms) / 1000)
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// seconds formats milliseconds as 3014 does: "%d.%03d".
func seconds(ms int64) string {
	b := strconv.AppendInt(nil, ms/1000, 10)
	r := ms % 1000
	return string(append(b, '.', byte('0'+r/100), byte('0'+r/10%10), byte('0'+r%10)))
}
