package store_test

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// TestErrorfWraps: Errorf wraps its %w operand (errors.Is and errors.As
// see the cause) and keeps its code and message, however deeply wrapped.
func TestErrorfWraps(t *testing.T) {
	e := store.Errorf(store.ENOTFOUND, "restore %d: %w", 7, sql.ErrNoRows)
	err := fmt.Errorf("web: %w", e)
	if !errors.Is(err, sql.ErrNoRows) {
		t.Error("errors.Is does not see sql.ErrNoRows through Errorf's %w")
	}
	if got := store.ErrorCode(err); got != store.ENOTFOUND {
		t.Errorf("code %q, want %q", got, store.ENOTFOUND)
	}
	if got, want := store.ErrorMessage(err), "restore 7: "+sql.ErrNoRows.Error(); got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if plain := store.Errorf(store.EINVALID, "bad %s", "x"); plain.Unwrap() != nil || plain.Message != "bad x" {
		t.Errorf("without %%w: %+v, want nothing wrapped", plain)
	}
}

// A reject reads as file:line: reason, and without the parts it lacks (a
// pushed record has no file): never ":0: …".
func TestRejectString(t *testing.T) {
	for _, c := range []struct {
		r    store.Reject
		want string
	}{
		{store.Reject{File: "backups.csv", Line: 4, Reason: "bad"}, "backups.csv:4: bad"},
		{store.Reject{File: "SQLB01", Reason: "bad"}, "SQLB01: bad"},
		{store.Reject{Reason: "backup set: type Z"}, "backup set: type Z"},
	} {
		if got := c.r.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
}

// ParseTime takes every way a person writes an instant, UTC unless told,
// and refuses the rest naming the field (issue 41: one parser for every
// --at, --from, --to, --until and the dashboard's from, to and at).
func TestParseTime(t *testing.T) {
	for s, want := range map[string]time.Time{
		"":                          {},
		"2026-11-03":                time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC),
		"2026-11-03 20:00":          time.Date(2026, 11, 3, 20, 0, 0, 0, time.UTC),
		"2026-11-03T20:00:05":       time.Date(2026, 11, 3, 20, 0, 5, 0, time.UTC),
		" 2026-11-03 20:00:05 ":     time.Date(2026, 11, 3, 20, 0, 5, 0, time.UTC),
		"2026-11-03T20:00:00+01:00": time.Date(2026, 11, 3, 19, 0, 0, 0, time.UTC),
	} {
		got, err := store.ParseTime("--at", s)
		if err != nil || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"yesterday", "03/11/2026", "2026-13-01", "9999-12-31"} {
		_, err := store.ParseTime("--from", s)
		if store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "--from") {
			t.Errorf("ParseTime(%q): %v, want EINVALID naming --from", s, err)
		}
		if notTime := s != "9999-12-31"; errors.Is(err, store.ErrNotTime) != notTime {
			t.Errorf("ParseTime(%q): %v wraps ErrNotTime = %v, want %v (out of the window is a time)", s, err, !notTime, notTime)
		}
	}
}
