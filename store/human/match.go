package human

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// NameKey is the form two instance or database names compare by, as SQL
// Server compares identifiers: brackets around a name dropped (and "]]"
// inside them read as "]"), spaces at either end ignored (SQL Server pads
// trailing spaces in comparisons; imports trim them), and case folded.
// Import, CLI, pages and API all match names through it (MatchNames).
func NameKey(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '[' && s[len(s)-1] == ']' {
		s = strings.TrimSpace(strings.ReplaceAll(s[1:len(s)-1], "]]", "]"))
	}
	return strings.ToLower(s)
}

// MatchNames resolves what a user typed for an instance or database filter
// to the names it means: the name spelt exactly as typed; else every name
// equal to it by NameKey (case, spaces at the ends, brackets); else every
// name it begins (prefix), case ignored. SQL Server compares instance names, and usually database names,
// without case, and a prefix saves typing SQLPROD01.contoso.com. Nil when
// nothing matches. The command line's filters and the dashboard's resolve
// names with it, so both match alike.
func MatchNames(text string, names []string) []string {
	if slices.Contains(names, text) {
		return []string{text}
	}
	var equal, prefix []string
	key := NameKey(text)
	for _, n := range names {
		switch {
		case NameKey(n) == key:
			equal = append(equal, n)
		case hasPrefixFold(n, key):
			prefix = append(prefix, n)
		}
	}
	if len(equal) > 0 {
		return equal
	}
	return prefix
}

// hasPrefixFold reports whether s begins with prefix, case ignored.
func hasPrefixFold(s, prefix string) bool {
	for prefix != "" {
		if s == "" {
			return false
		}
		a, na := utf8.DecodeRuneInString(s)
		b, nb := utf8.DecodeRuneInString(prefix)
		if a != b && !strings.EqualFold(string(a), string(b)) {
			return false
		}
		s, prefix = s[na:], prefix[nb:]
	}
	return true
}

// Closest orders names by how near they are to text: those containing it
// (case ignored) first, then by the edit distance from text to the nearest
// beginning of the name (what was typed is usually the start of a name,
// so "RPT-SQL1" is one edit from RPT-SQL01\REPORTING and four from
// ARCH-SQL12), then by the edit distance to the whole name, then by name:
// the order in which to suggest names when a filter matches nothing.
//
// Only the first closestRunes characters of text and of each name are
// compared, so a suggestion costs at most closestRunes² steps a name
// whatever their length (SQL Server's names are at most 128 characters).
func Closest(text string, names []string) []string {
	t := strings.ToLower(clip(text))
	type scored struct {
		name         string
		contains     bool
		prefix, dist int
	}
	s := make([]scored, len(names))
	for i, n := range names {
		l := strings.ToLower(clip(n))
		prefix, dist := levenshtein(t, l)
		s[i] = scored{n, strings.Contains(l, t), prefix, dist}
	}
	slices.SortFunc(s, func(a, b scored) int {
		if a.contains != b.contains {
			if a.contains {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.prefix, b.prefix), cmp.Compare(a.dist, b.dist), cmp.Compare(a.name, b.name))
	})
	out := make([]string, len(s))
	for i := range s {
		out[i] = s[i].name
	}
	return out
}

// closestRunes bounds what Closest compares of a name.
const closestRunes = 128

// clip is s's first closestRunes characters.
func clip(s string) string {
	n := 0
	for i := range s {
		if n == closestRunes {
			return s[:i]
		}
		n++
	}
	return s
}

// levenshtein is the edit distance in runes from a to the nearest prefix
// of b, and from a to the whole of b.
func levenshtein(a, b string) (prefix, whole int) {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			sub := prev[j-1]
			if ra[i-1] != rb[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return slices.Min(prev), prev[len(rb)]
}

// A "no match" sentence lists every name when there are at most allNames,
// else the closest suggestions.
const (
	allNames    = 20
	suggestions = 10
)

// NoMatch is the one sentence the command line (as its error) and the
// dashboard (as its notice) say when what a user typed for a what
// ("instance", plural "instances") names none of names, or, given several
// matches, more than one: "no instance NOPE; instances: A, B, C", of many
// "no instance NOPE; closest of the 200 instances: A, B, …", and "no
// single instance matches RPT: it begins 3 names (A, B, C); type more of
// the one you mean". where follows the typed name (" on SQL01"). Control
// characters are shown as "?" (Printable).
func NoMatch(what, plural, typed, where string, matches, names []string) string {
	if len(matches) > 1 {
		return fmt.Sprintf("no single %s matches %s%s: it begins %d names (%s); type more of the one you mean",
			what, Printable(typed), where, len(matches), listNames(matches))
	}
	msg := fmt.Sprintf("no %s %s%s", what, Printable(typed), where)
	if len(names) == 0 {
		return msg + fmt.Sprintf("; there are no %s", plural)
	}
	s := Closest(typed, names)
	if len(names) <= allNames {
		return msg + fmt.Sprintf("; %s: %s", plural, listNames(s))
	}
	return msg + fmt.Sprintf("; closest of the %d %s: %s, …", len(names), plural, listNames(s[:suggestions]))
}

// listNames joins names, at most allNames of them, Printable.
func listNames(names []string) string {
	more := ""
	if len(names) > allNames {
		names, more = names[:suggestions], ", …"
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = Printable(n)
	}
	return strings.Join(out, ", ") + more
}

// Printable keeps a terminal safe from control characters a server name,
// a database name or what a user typed may hold: each is shown as "?";
// an empty name is "-".
func Printable(s string) string {
	if s == "" {
		return "-"
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
}
