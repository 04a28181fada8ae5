package store

import (
	"errors"
	"strings"
	"time"
)

// The instants the warehouse keeps. msdb's dates are SQL Server datetime,
// which holds 1753-01-01 to 9999-12-31: a value outside cannot have come
// from a server. Within it, restorewatch keeps only 1980-01-01 to
// 2199-12-31, a sanity window (no SQL Server ran before 1989; a date in 2200
// or later is a placeholder such as 9999-12-31 or a clock gone wrong). The
// window also keeps every instant, shifted by any offset an instance can
// have, far inside what JSON, the pages and the charts can show. Every
// record's Validate checks its times with CheckInstant, so every door (a
// file import, a live pass, a push) refuses such a value with its reason and
// file:line, and no parser needs its own check.
var (
	SQLServerEarliest = time.Date(1753, 1, 1, 0, 0, 0, 0, time.UTC)
	SQLServerLatest   = time.Date(9999, 12, 31, 23, 59, 59, 997e6, time.UTC)
	EarliestKept      = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	LatestKept        = time.Date(2199, 12, 31, 23, 59, 59, 999e6, time.UTC)
)

// SQL Server's own limits on a backup: a database has at most 32,767 files
// and a media set at most 64 families; each family may be mirrored up to
// four times, so a set names at most 256 devices.
const (
	MaxBackupFiles   = 32767
	MaxMediaFamilies = 64
	maxDevices       = 4 * MaxMediaFamilies
)

// MaxUTCOffset bounds an instance's offset from UTC, in minutes: SQL
// Server's datetimeoffset holds -14:00 to +14:00, as do the world's zones.
const MaxUTCOffset = 14 * 60

// CheckInstant reports, as EINVALID naming field, a time outside SQL
// Server's datetime range or the window kept. Both the wall clock (a local
// time stored as UTC, see the records' comment) and the instant it denotes
// in its own location are checked: 9999-12-31 23:59:59-05:00 is a valid
// wall clock whose instant is in the year 10000.
func CheckInstant(field string, t time.Time) error {
	wall := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	for _, v := range []time.Time{wall, t.UTC()} {
		switch {
		case v.Before(SQLServerEarliest) || v.After(SQLServerLatest):
			return Errorf(EINVALID, "%s %s is outside SQL Server's datetime range (1753-01-01 to 9999-12-31)", field, showInstant(t))
		case v.Before(EarliestKept) || v.After(LatestKept):
			return Errorf(EINVALID, "%s %s is outside the dates restorewatch keeps (1980-01-01 to 2199-12-31): a placeholder or a wrong clock", field, showInstant(t))
		}
	}
	return nil
}

// CheckInstantPtr is CheckInstant for an optional time.
func CheckInstantPtr(field string, t *time.Time) error {
	if t == nil {
		return nil
	}
	return CheckInstant(field, *t)
}

// checkOffset reports an offset (minutes) beyond ±14:00.
func checkOffset(field string, minutes *int) error {
	if minutes != nil && (*minutes < -MaxUTCOffset || *minutes > MaxUTCOffset) {
		return Errorf(EINVALID, "%s %+d minutes is beyond SQL Server's ±14:00", field, *minutes)
	}
	return nil
}

// showInstant formats t for a reject; a year past 9999 still formats.
func showInstant(t time.Time) string {
	if t.Location() == time.UTC {
		return t.Format("2006-01-02 15:04:05")
	}
	return t.Format("2006-01-02 15:04:05 -07:00")
}

// firstError returns the first non-nil error.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// The ends of what a time read from the warehouse may be: what JSON (RFC
// 3339) and the pages can show.
var (
	minShown = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	maxShown = time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC)
)

// UnixMs is the UTC time of a stored millisecond count, held to years 1
// to 9999. No door lets a value beyond the window kept in (CheckInstant),
// but a warehouse written by an older version or edited by hand may hold
// one, and one such value must not turn the fleet's API into an error.
func UnixMs(ms int64) time.Time {
	switch {
	case ms < minShown.UnixMilli():
		return minShown
	case ms > maxShown.UnixMilli():
		return maxShown
	}
	return time.UnixMilli(ms).UTC()
}

// timeLayouts are the ways a person writes an instant for a flag or a
// query: RFC 3339, or a date and a time (seconds optional) without a zone
// taken as UTC, or a day (its midnight, UTC).
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04",
	"2006-01-02 15:04", time.DateOnly}

// ParseTime reads an instant a person typed — every --at, --from, --to and
// --until of the CLI and every from, to and at of the dashboard (issue 41:
// they took RFC 3339 in one place and a day in another): 2026-11-03,
// 2026-11-03 20:00, 2026-11-03 20:00:05 (UTC) or RFC 3339. Empty is the
// zero time; anything else, or an instant outside the window kept, is
// EINVALID naming field.
func ParseTime(field, s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			if err := CheckInstant(field, t); err != nil {
				return time.Time{}, err
			}
			return t.UTC(), nil
		}
	}
	return time.Time{}, Errorf(EINVALID, "%s %q %w: use 2026-11-03 (a UTC day), 2026-11-03 20:00 (UTC) or RFC 3339 (2026-11-03T20:00:00Z)", field, s, ErrNotTime)
}

// ErrNotTime is what ParseTime's error wraps when the text is no instant at
// all (not one outside the window kept), for a caller that words its own
// choices (plan.ParseAt adds "latest").
var ErrNotTime = errors.New("is not a date or an instant")
