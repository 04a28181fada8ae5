package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestMatchNames(t *testing.T) {
	names := []string{"SQLPROD01", "SQLPROD02", "sqlprod01", "LS-SQL03", "Sales", "SALES", "SalesArchive", "Ärzte"}
	tests := []struct {
		text string
		want []string
	}{
		{"SQLPROD01", []string{"SQLPROD01"}},              // exact spelling wins alone
		{"SqlProd01", []string{"SQLPROD01", "sqlprod01"}}, // equal but for case: all of them
		{"sqlprod", []string{"SQLPROD01", "SQLPROD02", "sqlprod01"}},
		{"ls", []string{"LS-SQL03"}},
		{"sales", []string{"Sales", "SALES"}}, // equal beats prefix: not SalesArchive
		{"salesa", []string{"SalesArchive"}},
		{"ärz", []string{"Ärzte"}}, // case folding beyond ASCII
		{"NOPE", nil},
		{"SQLPROD011", nil}, // longer than every name
	}
	for _, tt := range tests {
		if got := matchNames(tt.text, names); !slices.Equal(got, tt.want) {
			t.Errorf("matchNames(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

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
	// A name containing the text comes before a nearer spelling that does not.
	if got := closest("prod", []string{"PROX", "SQLPROD01"}); got[0] != "SQLPROD01" {
		t.Errorf("closest = %q", got)
	}
	// Control characters in what the user typed or in names never reach the terminal.
	if got := noMatch("instance", "instances", "a\x1b[2Jb", "", []string{"x\x07y"}); strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("got %q", got)
	}
}

func TestLevenshtein(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"sqlprod01", "sqlprod10", 2}, {"ärzte", "arzte", 1}} {
		if got := levenshtein(tt.a, tt.b); got != tt.want {
			t.Errorf("levenshtein(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
