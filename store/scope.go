package store

// InstancePatterns returns a token's instance names or patterns normalised
// as instance names are (see InstanceName), empty ones left out.
func InstancePatterns(in []string) []string {
	out := []string{}
	for _, p := range in {
		if n := InstanceName(p); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// MatchesAny reports whether the instance name matches one of the
// patterns, ignoring ASCII case only, as the warehouse compares instance
// names (SQLite's NOCASE): Unicode case folding would let a token for
// SQL01 write ſQL01 (U+017F, long s), a different instance stored beside
// it. A pattern's '*' stands for any run of characters and '?' for one;
// nothing else is special (a backslash separates a server from its
// instance).
func MatchesAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if globASCII([]rune(p), []rune(name)) {
			return true
		}
	}
	return false
}

// globASCII matches name against pattern p, '*' and '?' as in matchesAny,
// letters compared with ASCII case folding. Iterative, with one backtrack
// point: linear in len(p)·len(name) at worst.
func globASCII(p, name []rune) bool {
	pi, ni := 0, 0
	star, mark := -1, 0
	for ni < len(name) {
		switch {
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ni
			pi++
		case pi < len(p) && (p[pi] == '?' || foldASCII(p[pi]) == foldASCII(name[ni])):
			pi++
			ni++
		case star >= 0:
			mark++
			pi, ni = star+1, mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

func foldASCII(r rune) rune {
	if 'a' <= r && r <= 'z' {
		return r - 'a' + 'A'
	}
	return r
}
