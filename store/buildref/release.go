package buildref

import (
	"slices"
	"strings"
)

// Release is what a build is called.
type Release struct {
	// Version is the build that was asked about.
	Version Version
	// Listed is the list build the name was taken from: equal to Version's
	// build when the match is exact, the nearest lower listed build when
	// Approximate, zero when no listed build was used.
	Listed Version
	// Product is the compact product key: "2016", "2008R2", "2019"… (or the
	// banner's product for non-boxed engines such as "Azure SQL Edge").
	Product string
	// Level is the service-pack level: "RTM", "SP1", "CTP2.1", "RC"; "" when
	// not known (builds below a product's first listed level).
	Level string
	// CU is the cumulative update, "CU8", or "". A GDR or security build on
	// top of a CU keeps that CU here and sets GDR.
	CU string
	// GDR is true for a build without a CU number of its own that follows the
	// RTM/SP base or a CU: GDR, security and on-demand updates.
	GDR bool
	// KB lists the build's KB articles, "KB4077064" (first one is the main one).
	KB []string
	// ReleaseDate is yyyy-mm-dd when the list gives it, else "".
	ReleaseDate string
	// Retired is true for a build Microsoft withdrew.
	Retired bool
	// Approximate is true when the exact build is not in the list and the
	// nearest lower known build of the same product was used (or none was, and
	// only the product is known). Text stated by the server that pins the
	// build (a CU or KB) clears it in Resolve.
	Approximate bool
	// Known is false when not even the product line is known; then only
	// Version (and any stated text) is set.
	Known bool
}

// Name is the release's display name: "2016 SP1 CU8", "2019 RTM",
// "2019 CU16 + GDR (KB5014353)", "2008 R2 SP3 + GDR (KB3146034)". For
// 2017 and later, which have no service packs, "RTM" is left out once a CU is
// named. A release with no known level is just the product ("2019"); an
// unknown one is "unknown build 18.0.100.1".
//
// Name never says "approximate": callers show Approximate as a marker of its
// own (and store it separately), so that a newer build list can later clear
// it without the name changing shape.
func (r Release) Name() string {
	if !r.Known {
		return "unknown build " + r.Version.String()
	}
	parts := []string{productDisplay(r.Product)}
	if r.Level != "" && (r.CU == "" || r.Level != "RTM" || r.Version.Major < 14) {
		parts = append(parts, r.Level)
	}
	if r.CU != "" {
		parts = append(parts, r.CU)
	}
	if r.GDR {
		g := "+ GDR"
		if len(r.KB) > 0 {
			g += " (" + r.KB[0] + ")"
		}
		parts = append(parts, g)
	}
	return strings.Join(parts, " ")
}

// stated is what a server says about its own build.
type stated struct {
	level, cu, kb string
	gdr           bool
}

// Resolve names build v, letting the server's own text win over the list:
// level is SERVERPROPERTY('ProductLevel') or the banner's level ("RTM",
// "SP1"; a whole banner group such as "RTM-CU16-GDR" is also understood), cu
// is ProductUpdateLevel ("CU2") and kb is ProductUpdateReference
// ("KB3182270" or "3182270"). Empty arguments mean "not stated" (older builds
// do not report a CU) and keep the list's value; text that is not a KB
// number is ignored.
//
// A stated level that differs from the list's drops the list's CU, KB and
// date; so does a stated CU. A stated KB found elsewhere in the list for the
// same product supplies that entry's level, CU and date. A stated CU or KB
// makes the result exact (Approximate false); a level alone does not.
func (ref *Reference) Resolve(v Version, level, cu, kb string) Release {
	var s stated
	s.level, s.cu, s.gdr = parseLevelGroup(level)
	if c, g := parseCU(cu); c != "" {
		s.cu, s.gdr = c, s.gdr || g
	}
	s.kb = normKB(kb)
	return ref.resolve(v, s)
}

// ResolveBanner names the build a parsed banner describes, with the banner's
// own level, CU, GDR mark and KB winning over the list. Engines that are not
// a boxed SQL Server release (Azure SQL Edge, Azure SQL) are named from the
// banner alone: their version numbers do not follow the SQL Server list.
func (ref *Reference) ResolveBanner(b Banner) Release {
	if !boxedProduct(b.Product) {
		var kb []string
		if b.KB != "" {
			kb = []string{b.KB}
		}
		return Release{Version: b.Version, Product: b.Product, Level: b.Level, CU: b.CU,
			GDR: b.GDR, KB: kb, Known: true}
	}
	return ref.resolve(b.Version, stated{level: b.Level, cu: b.CU, kb: b.KB, gdr: b.GDR})
}

// boxedProduct reports whether p names a SQL Server release ("2019",
// "2008R2") rather than another engine of the family.
func boxedProduct(p string) bool {
	return isDigits(p) || (strings.HasSuffix(p, "R2") && isDigits(strings.TrimSuffix(p, "R2")))
}

func (ref *Reference) resolve(v Version, s stated) Release {
	r := ref.Lookup(v)
	if s == (stated{}) {
		return r
	}
	if s.kb != "" && !slices.Contains(r.KB, s.kb) {
		if e, ok := ref.findKB(v, s.kb); ok {
			r = e.release(v)
		}
	}
	if s.level != "" && s.level != r.Level {
		r.Level, r.CU, r.GDR, r.KB, r.ReleaseDate, r.Retired = s.level, "", false, nil, "", false
	}
	if s.cu != "" && s.cu != r.CU {
		r.CU, r.GDR, r.KB, r.ReleaseDate, r.Retired = s.cu, false, nil, "", false
	}
	if s.gdr && !r.GDR {
		r.GDR, r.KB, r.ReleaseDate, r.Retired = true, nil, "", false
	}
	if s.kb != "" && !slices.Contains(r.KB, s.kb) {
		r.KB, r.ReleaseDate, r.Retired = []string{s.kb}, "", false
	}
	if s.cu != "" || s.kb != "" {
		r.Approximate = false
	}
	return r
}

// parseLevelGroup splits a banner level group such as "SP1-CU8",
// "RTM-CU16-GDR", "CTP 2.1" or "RTM-GDR" into level, CU and GDR mark. Tokens
// it does not know (e.g. "OD") are skipped; the first token is the level
// unless it is a CU. Levels are upper-cased with spaces removed. A level that
// is not letters, digits and dots comes back as "".
func parseLevelGroup(g string) (level, cu string, gdr bool) {
	for i, t := range strings.Split(normLevel(g), "-") {
		switch {
		case t == "GDR":
			gdr = true
		case isCU(t):
			cu = t
		case i == 0 && validLevel(t):
			level = t
		}
	}
	return level, cu, gdr
}

// parseCU reads a stated CU: "CU2", "cu2", "2" or "CU16-GDR".
func parseCU(s string) (cu string, gdr bool) {
	t := normLevel(s)
	if isDigits(t) {
		return "CU" + t, false
	}
	for _, tok := range strings.Split(t, "-") {
		switch {
		case tok == "GDR":
			gdr = true
		case isCU(tok):
			cu = tok
		}
	}
	return cu, gdr
}

// isCU reports whether t is "CU" followed by digits.
func isCU(t string) bool {
	return len(t) > 2 && strings.HasPrefix(t, "CU") && isDigits(t[2:])
}

// validLevel accepts RTM, SP3, CTP2.1, RC1 and the like.
func validLevel(t string) bool {
	if t == "" || len(t) > 16 {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.') {
			return false
		}
	}
	return true
}

// normKB turns "KB3182270", "kb 3182270" or "3182270" into "KB3182270"; it
// returns "" for anything that is not a KB number.
func normKB(s string) string {
	t := strings.Join(strings.Fields(s), "")
	if len(t) >= 2 && strings.EqualFold(t[:2], "KB") {
		t = t[2:]
	}
	if !isDigits(t) || len(t) > 12 {
		return ""
	}
	return "KB" + t
}
