package main

import (
	"fmt"
	"strings"
	"testing"
)

func TestNoMatchListsClosestFirst(t *testing.T) {
	few := []string{"ERP-SQL07", "SQLPROD10", "LS-SQL03"}
	if got, want := noMatch("instance", "instances", "SQLPROD1", "", few), "no instance SQLPROD1; instances: SQLPROD10, LS-SQL03, ERP-SQL07"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got, want := noMatch("database", "databases", "x", " on A", nil), "no database x on A; there are no databases"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	var many []string
	for i := range 200 {
		many = append(many, fmt.Sprintf("HOST%03d", i))
	}
	got := noMatch("instance", "instances", "HOST17Z", "", many)
	if !strings.HasPrefix(got, "no instance HOST17Z; closest of the 200 instances: HOST170, HOST171, HOST172") ||
		strings.Count(got, "HOST") != 1+suggestions || !strings.HasSuffix(got, ", …") {
		t.Errorf("got %q", got)
	}
	// Control characters in what the user typed or in names never reach the terminal.
	if got := noMatch("instance", "instances", "a\x1b[2Jb", "", []string{"x\x07y"}); strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("got %q", got)
	}
}
