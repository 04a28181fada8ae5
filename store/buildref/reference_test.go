package buildref_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/store/buildref"
)

// want is the part of a Release a test checks.
type want struct {
	name        string
	level, cu   string
	gdr         bool
	kb          string // first KB, "" for none
	approximate bool
	known       bool
}

func check(t *testing.T, what string, r buildref.Release, w want) {
	t.Helper()
	kb := ""
	if len(r.KB) > 0 {
		kb = r.KB[0]
	}
	got := want{r.Name(), r.Level, r.CU, r.GDR, kb, r.Approximate, r.Known}
	if got != w {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, w)
	}
}

func TestDefaultLookupExact(t *testing.T) {
	ref := buildref.Default()
	for _, tc := range []struct {
		ver string
		w   want
	}{
		{"13.0.4474.0", want{"2016 SP1 CU8", "SP1", "CU8", false, "KB4077064", false, true}},
		{"13.0.4502.0", want{"2016 SP1 CU9", "SP1", "CU9", false, "KB4100997", false, true}},
		{"13.0.5026.0", want{"2016 SP2", "SP2", "", false, "KB4052908", false, true}},
		{"13.0.5149.0", want{"2016 SP2 CU1", "SP2", "CU1", false, "KB4135048", false, true}},
		{"12.0.5579.0", want{"2014 SP2 CU11", "SP2", "CU11", false, "KB4077063", false, true}},
		{"12.0.5589.7", want{"2014 SP2 CU12", "SP2", "CU12", false, "KB4130489", false, true}},
		{"12.0.6024.0", want{"2014 SP3", "SP3", "", false, "KB4022619", false, true}},
		{"14.0.3025.34", want{"2017 CU6", "RTM", "CU6", false, "KB4101464", false, true}},
		{"14.0.3026.27", want{"2017 CU7", "RTM", "CU7", false, "KB4229789", false, true}},
		{"14.0.3048.4", want{"2017 CU13", "RTM", "CU13", false, "KB4466404", false, true}},
		{"14.0.3294.2", want{"2017 CU20", "RTM", "CU20", false, "KB4541283", false, true}},
		{"15.0.2000.5", want{"2019 RTM", "RTM", "", false, "", false, true}},
		{"15.0.4236.7", want{"2019 CU16 + GDR (KB5014353)", "RTM", "CU16", true, "KB5014353", false, true}},
		{"16.0.1000.6", want{"2022 RTM", "RTM", "", false, "", false, true}},
		{"17.0.4025.3", want{"2025 CU3", "RTM", "CU3", false, "KB5077896", false, true}},
		{"10.50.6000.34", want{"2008 R2 SP3", "SP3", "", false, "KB2979597", false, true}},
		{"10.50.6542", want{"2008 R2 SP3 + GDR (KB3146034)", "SP3", "", true, "KB3146034", false, true}},
		{"13.0.2164.0", want{"2016 RTM CU2", "RTM", "CU2", false, "KB3182270", false, true}},
	} {
		r := ref.Lookup(v(tc.ver))
		check(t, "Lookup "+tc.ver, r, tc.w)
		if r.Version != v(tc.ver) || r.Listed.Build != r.Version.Build {
			t.Errorf("Lookup %s: Version %v, Listed %v", tc.ver, r.Version, r.Listed)
		}
	}
	if r := ref.Lookup(v("14.0.3048.4")); r.ReleaseDate != "2018-12-18" || r.Product != "2017" {
		t.Errorf("14.0.3048: date %q product %q; want 2018-12-18, 2017", r.ReleaseDate, r.Product)
	}
	if r := ref.Lookup(v("10.50.6000.34")); r.Product != "2008R2" {
		t.Errorf("10.50.6000: product %q; want 2008R2", r.Product)
	}
}

// Every service-pack level of 2008 R2 to 2025 must be in the embedded list.
func TestDefaultCoversServicePacks(t *testing.T) {
	ref := buildref.Default()
	for _, s := range []string{
		"10.50.1600 2008 R2 RTM", "10.50.2500 2008 R2 SP1", "10.50.4000 2008 R2 SP2", "10.50.6000 2008 R2 SP3",
		"11.0.2100 2012 RTM", "11.0.3000 2012 SP1", "11.0.5058 2012 SP2", "11.0.6020 2012 SP3", "11.0.7001 2012 SP4",
		"12.0.2000 2014 RTM", "12.0.4100 2014 SP1", "12.0.5000 2014 SP2", "12.0.6024 2014 SP3",
		"13.0.1601 2016 RTM", "13.0.4001 2016 SP1", "13.0.5026 2016 SP2", "13.0.6300 2016 SP3",
		"14.0.1000 2017 RTM", "15.0.2000 2019 RTM", "16.0.1000 2022 RTM", "17.0.1000 2025 RTM",
	} {
		ver, name, _ := strings.Cut(s, " ")
		if r := ref.Lookup(v(ver)); r.Name() != name || r.Approximate {
			t.Errorf("Lookup %s = %q (approximate %v); want %q", ver, r.Name(), r.Approximate, name)
		}
	}
}

func TestDefaultLookupApproximateAndUnknown(t *testing.T) {
	ref := buildref.Default()
	r := ref.Lookup(v("13.0.2161.3")) // CEIP sample: not listed, CU2 is 13.0.2164
	check(t, "Lookup 13.0.2161.3", r, want{"2016 RTM CU1", "RTM", "CU1", false, "KB3164674", true, true})
	if r.Listed != v("13.0.2149") {
		t.Errorf("Lookup 13.0.2161.3: Listed %v; want 13.0.2149.0", r.Listed)
	}
	// Above the newest listed CU: named after it.
	check(t, "Lookup 17.0.9999.1", ref.Lookup(v("17.0.9999.1")),
		want{"2025 CU7", "RTM", "CU7", false, "KB5096981", true, true})
	// Below a product's first listed build: product only.
	check(t, "Lookup 15.0.1100.94", ref.Lookup(v("15.0.1100.94")), want{"2019", "", "", false, "", true, true})
	// Not even the product line is known.
	check(t, "Lookup 18.0.1000.1", ref.Lookup(v("18.0.1000.1")),
		want{"unknown build 18.0.1000.1", "", "", false, "", false, false})
	check(t, "Lookup 10.25.1.0", ref.Lookup(v("10.25.1.0")),
		want{"unknown build 10.25.1.0", "", "", false, "", false, false})
	// 10.0 and 10.50 are separate products: 10.50.1 is not named after 2008.
	check(t, "Lookup 10.50.1.0", ref.Lookup(v("10.50.1.0")), want{"2008 R2", "", "", false, "", true, true})
	var none *buildref.Reference
	check(t, "nil Lookup", none.Lookup(v("13.0.4474")), want{"2016", "", "", false, "", true, true})
}

func TestResolve(t *testing.T) {
	ref := buildref.Default()
	for _, tc := range []struct {
		what, ver, level, cu, kb string
		w                        want
	}{
		{"stated CU2/KB wins over nearest lower CU1", "13.0.2161.3", "RTM", "CU2", "KB3182270",
			want{"2016 RTM CU2", "RTM", "CU2", false, "KB3182270", false, true}},
		{"KB without prefix, CU as a number", "13.0.2161.3", "rtm", "2", "3182270",
			want{"2016 RTM CU2", "RTM", "CU2", false, "KB3182270", false, true}},
		{"nothing stated", "13.0.2161.3", "", "", "",
			want{"2016 RTM CU1", "RTM", "CU1", false, "KB3164674", true, true}},
		{"level alone keeps it approximate", "15.0.2070.41", "RTM", "", "",
			want{"2019 RTM", "RTM", "", false, "", true, true}},
		{"stated level differs: list CU dropped", "13.0.4474.0", "SP2", "", "",
			want{"2016 SP2", "SP2", "", false, "", false, true}},
		{"agreeing text changes nothing", "13.0.4474.0", "SP1", "CU8", "KB4077064",
			want{"2016 SP1 CU8", "SP1", "CU8", false, "KB4077064", false, true}},
		{"older build: level only, list CU kept", "12.0.5579.0", "SP2", "", "",
			want{"2014 SP2 CU11", "SP2", "CU11", false, "KB4077063", false, true}},
		{"banner group as level", "15.0.4236.7", "RTM-CU16-GDR", "", "KB5014353",
			want{"2019 CU16 + GDR (KB5014353)", "RTM", "CU16", true, "KB5014353", false, true}},
		{"unlisted GDR on a CU", "15.0.4280.7", "RTM", "CU18-GDR", "KB5021124",
			want{"2019 CU18 + GDR (KB5021124)", "RTM", "CU18", true, "KB5021124", false, true}},
		{"junk KB ignored", "13.0.4474.0", "", "", "see notes",
			want{"2016 SP1 CU8", "SP1", "CU8", false, "KB4077064", false, true}},
		{"pre-release level", "15.0.1100.94", "CTP2.1", "", "",
			want{"2019 CTP2.1", "CTP2.1", "", false, "", true, true}},
	} {
		check(t, tc.what, ref.Resolve(v(tc.ver), tc.level, tc.cu, tc.kb), tc.w)
	}
	// The stated KB's own list entry supplies its date.
	if r := ref.Resolve(v("17.0.4024.1"), "RTM", "CU3", "KB5077896"); r.ReleaseDate != "2026-03-12" || r.Listed != v("17.0.4025") {
		t.Errorf("Resolve by KB: date %q listed %v; want 2026-03-12 from 17.0.4025", r.ReleaseDate, r.Listed)
	}
}

func TestResolveBanner(t *testing.T) {
	ref := buildref.Default()
	for _, tc := range []struct {
		line string
		w    want
	}{
		{"Microsoft SQL Server 2016 (RTM-CU2) (KB3182270) - 13.0.2161.3 (X64)",
			want{"2016 RTM CU2", "RTM", "CU2", false, "KB3182270", false, true}},
		{"Microsoft SQL Server 2012 - 11.0.2100.60 (X64)",
			want{"2012 RTM", "RTM", "", false, "", false, true}},
		{"Microsoft SQL Server 2022 (RTM-GDR) (KB5021522) - 16.0.1050.5 (X64)",
			want{"2022 RTM + GDR (KB5021522)", "RTM", "", true, "KB5021522", false, true}},
		{"Microsoft SQL Server 2019 (RTM-CU18-GDR) (KB5021124) - 15.0.4280.7 (X64)",
			want{"2019 CU18 + GDR (KB5021124)", "RTM", "CU18", true, "KB5021124", false, true}},
		{"Microsoft SQL Server 2019 (CTP2.1) - 15.0.1100.94 (X64)",
			want{"2019 CTP2.1", "CTP2.1", "", false, "", true, true}},
		{"Microsoft Azure SQL Edge Developer (RTM) - 15.0.2000.1574 (ARM64)",
			want{"Azure SQL Edge RTM", "RTM", "", false, "", false, true}},
	} {
		b, ok := buildref.ParseBanner(tc.line)
		if !ok {
			t.Fatalf("ParseBanner(%q) failed", tc.line)
		}
		check(t, tc.line, ref.ResolveBanner(b), tc.w)
	}
}

func TestReleaseName(t *testing.T) {
	for _, tc := range []struct {
		r    buildref.Release
		want string
	}{
		{buildref.Release{Version: v("13.0.2164"), Product: "2016", Level: "RTM", CU: "CU2", Known: true}, "2016 RTM CU2"},
		{buildref.Release{Version: v("14.0.1000"), Product: "2017", Level: "RTM", Known: true}, "2017 RTM"},
		{buildref.Release{Version: v("16.0.1050"), Product: "2022", Level: "RTM", GDR: true, Known: true}, "2022 RTM + GDR"},
		{buildref.Release{Version: v("13.0.4474"), Product: "2016", Level: "SP1", CU: "CU8", Approximate: true, Known: true}, "2016 SP1 CU8"},
		{buildref.Release{Version: v("18.0.1"), Level: "RTM"}, "unknown build 18.0.1.0"},
	} {
		if got := tc.r.Name(); got != tc.want {
			t.Errorf("Name() of %+v = %q; want %q", tc.r, got, tc.want)
		}
	}
}

func loadFile(t *testing.T, path string) *buildref.Reference {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ref, err := buildref.Load(f)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	return ref
}

func TestMergePrecedence(t *testing.T) {
	base := buildref.Default()
	user, err := buildref.Load(strings.NewReader(`[
		{"v": "13.0.4474", "level": "sp1", "cu": "cu8", "kb": "KB9999999"},
		{"v": "13.0.2161", "level": "RTM", "cu": "CU2", "kb": "KB3182270"},
		{"v": "18.0.1000", "product": "2028", "level": "RTM"}]`))
	if err != nil {
		t.Fatal(err)
	}
	m := base.Merge(user)
	if got, want := m.Len(), base.Len()+2; got != want {
		t.Errorf("merged Len = %d; want %d", got, want)
	}
	check(t, "override", m.Lookup(v("13.0.4474.0")), want{"2016 SP1 CU8", "SP1", "CU8", false, "KB9999999", false, true})
	check(t, "extension", m.Lookup(v("13.0.2161.3")), want{"2016 RTM CU2", "RTM", "CU2", false, "KB3182270", false, true})
	check(t, "new product", m.Lookup(v("18.0.1000.5")), want{"2028 RTM", "RTM", "", false, "", false, true})
	check(t, "kept from base", m.Lookup(v("13.0.4502")), want{"2016 SP1 CU9", "SP1", "CU9", false, "KB4100997", false, true})
	check(t, "base untouched", base.Lookup(v("13.0.4474.0")), want{"2016 SP1 CU8", "SP1", "CU8", false, "KB4077064", false, true})

	// A dbatools file laid over the embedded list: its date stamp wins.
	mini := loadFile(t, "testdata/dbatools-mini.json")
	m2 := base.Merge(mini)
	if m2.LastUpdated() != "2026-07-16T00:00:00" {
		t.Errorf("LastUpdated = %q", m2.LastUpdated())
	}
	check(t, "from mini", m2.Lookup(v("15.0.2070.41")), want{"2019 RTM + GDR (KB4517790)", "RTM", "", true, "KB4517790", false, true})
	if got := base.Merge(nil); got.Len() != base.Len() {
		t.Errorf("Merge(nil).Len() = %d; want %d", got.Len(), base.Len())
	}
	// Results do not share KB slices with the list.
	r := m.Lookup(v("13.0.2161"))
	r.KB[0] = "KB0"
	if again := m.Lookup(v("13.0.2161")); !slices.Equal(again.KB, []string{"KB3182270"}) {
		t.Errorf("a caller's change leaked into the list: %v", again.KB)
	}
}
