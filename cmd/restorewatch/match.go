package main

import (
	"fmt"
	"strings"

	"github.com/restorewatch/restorewatch/store/human"
)

// A "no match" message lists every name when there are at most allNames,
// else the closest suggestions.
const (
	allNames    = 20
	suggestions = 10
)

// noMatch says that nothing is called text and lists what is, closest
// first: "no instance NOPE; instances: A, B, C", or, of many,
// "no instance NOPE; closest of the 200 instances: A, B, …".
func noMatch(what, plural, text, where string, names []string) string {
	msg := fmt.Sprintf("no %s %s%s", what, printable(text), where)
	if len(names) == 0 {
		return msg + fmt.Sprintf("; there are no %s", plural)
	}
	s := human.Closest(text, names)
	if len(s) > allNames {
		s = s[:suggestions]
	}
	list := printables(s)
	if len(names) <= allNames {
		return msg + fmt.Sprintf("; %s: %s", plural, strings.Join(list, ", "))
	}
	return msg + fmt.Sprintf("; closest of the %d %s: %s, …", len(names), plural, strings.Join(list, ", "))
}
