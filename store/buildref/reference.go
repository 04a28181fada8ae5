package buildref

import (
	"bytes"
	_ "embed"
	"slices"
	"sync"
)

// Reference is a build list sorted by version. It is never modified after it
// is built, so one value may be shared by any number of goroutines. A nil
// *Reference behaves as an empty list.
type Reference struct {
	entries     []entry
	lastUpdated string
}

// entry is one listed build with its inherited facts already applied.
type entry struct {
	v Version
	// full is true when the list gave a revision; only then must the
	// revision match for an exact hit (15.0.1900.25 vs 15.0.1900.47).
	full    bool
	product string
	level   string
	cu      string
	gdr     bool
	kb      []string
	date    string
	retired bool
}

// release names build v after entry e.
func (e entry) release(v Version) Release {
	exact := e.v.sameBuild(v) && (!e.full || e.v.Revision == v.Revision)
	return Release{
		Version: v, Listed: e.v, Product: e.product, Level: e.level, CU: e.cu, GDR: e.gdr,
		KB: slices.Clone(e.kb), ReleaseDate: e.date, Retired: e.retired,
		Approximate: !exact, Known: true,
	}
}

//go:embed builds.json
var buildsJSON []byte

var defaultRef = sync.OnceValue(func() *Reference {
	ref, err := Load(bytes.NewReader(buildsJSON))
	if err != nil {
		panic("buildref: embedded builds.json: " + err.Error())
	}
	return ref
})

// Default is the project's own embedded build list (builds.json): RTM and
// every service pack from 2000 to 2025; every CU of 2012 SP2/SP3, 2014
// SP1–SP3, 2016 RTM–SP2, 2017, 2019, 2022 and 2025; and the GDR builds the
// reference notes name (2019 CU16 GDR, 2008 R2 SP3 GDR). The value is shared
// and never changes.
func Default() *Reference { return defaultRef() }

// Len is the number of listed builds.
func (ref *Reference) Len() int { return len(ref.list()) }

// Builds lists the listed builds in ascending order (a three-part entry
// has Revision 0).
func (ref *Reference) Builds() []Version {
	out := make([]Version, 0, ref.Len())
	for _, e := range ref.list() {
		out = append(out, e.v)
	}
	return out
}

// LastUpdated is the list's own date stamp (dbatools "LastUpdated"), or ""
// when the list has none.
func (ref *Reference) LastUpdated() string {
	if ref == nil {
		return ""
	}
	return ref.lastUpdated
}

func (ref *Reference) list() []entry {
	if ref == nil {
		return nil
	}
	return ref.entries
}

// Lookup names build v from the list alone: the listed build with the same
// major.minor.build (and revision, where the list gives one); else the
// nearest lower listed build of the same product, with Approximate set; else,
// when the product line is still known (from a higher listed build or from
// MajorName), a Release with only Product set, Approximate and an empty
// Level; else Known is false.
func (ref *Reference) Lookup(v Version) Release {
	es := ref.list()
	i, _ := slices.BinarySearchFunc(es, v, func(e entry, t Version) int {
		if e.v.Compare(t) <= 0 {
			return -1
		}
		return 1
	})
	// es[:i] are the entries <= v.
	if i > 0 && es[i-1].v.sameProduct(v) {
		return es[i-1].release(v)
	}
	r := Release{Version: v}
	switch {
	case i < len(es) && es[i].v.sameProduct(v):
		r.Product = es[i].product
	case MajorName(v.Major, v.Minor) != "":
		r.Product = productKey(MajorName(v.Major, v.Minor))
	default:
		return r
	}
	r.Known, r.Approximate = true, true
	return r
}

// findKB finds a listed build of v's product that carries KB kb, the one
// nearest to v when several do.
func (ref *Reference) findKB(v Version, kb string) (entry, bool) {
	var best entry
	found, bestDist := false, 0
	for _, e := range ref.list() {
		if !e.v.sameProduct(v) || !slices.Contains(e.kb, kb) {
			continue
		}
		d := e.v.Build - v.Build
		if d < 0 {
			d = -d
		}
		if !found || d < bestDist {
			best, found, bestDist = e, true, d
		}
	}
	return best, found
}

// Merge lays other over ref and returns the combined list; ref and other
// are left as they are. A build listed in both (same four-part version,
// a three-part entry counting as revision 0) is taken from other, so a
// user's newer dbatools file corrects the embedded list; builds only in ref
// are kept. The date stamp is other's when it has one.
func (ref *Reference) Merge(other *Reference) *Reference {
	out := &Reference{entries: slices.Clone(ref.list()), lastUpdated: ref.LastUpdated()}
	if other == nil {
		return out
	}
	at := make(map[Version]int, len(out.entries))
	for i, e := range out.entries {
		at[e.v] = i
	}
	for _, e := range other.entries {
		if i, ok := at[e.v]; ok {
			out.entries[i] = e
			continue
		}
		at[e.v] = len(out.entries)
		out.entries = append(out.entries, e)
	}
	sortEntries(out.entries)
	if other.lastUpdated != "" {
		out.lastUpdated = other.lastUpdated
	}
	return out
}

// sortEntries orders entries by version.
func sortEntries(es []entry) {
	slices.SortStableFunc(es, func(a, b entry) int { return a.v.Compare(b.v) })
}

// Namer returns a function naming a four-part version as pages and the CLI
// show it: "2016 SP1 CU8", with "≈ " in front when only the nearest lower
// listed build was found, and "" for text that is not a version.
func (ref *Reference) Namer() func(version string) string {
	return func(v string) string {
		ver, err := ParseVersion(v)
		if err != nil {
			return ""
		}
		r := ref.Lookup(ver)
		if r.Approximate {
			return "≈ " + r.Name()
		}
		return r.Name()
	}
}
