package store_test

import (
	"database/sql"
	"errors"
	"fmt"
	"testing"

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
