package buildref_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/restorewatch/restorewatch/store/buildref"
)

// sharedList finds the dbatools build reference kept in the project's shared
// reference notes (MIT, dbatools), which sit beside the repository's clone:
// it is read, never copied into the repo. RW_SHARED names the shared folder
// when it is elsewhere.
func sharedList() (string, error) {
	const rel = "reference/dbatools-buildref-index.json"
	if dir := os.Getenv("RW_SHARED"); dir != "" {
		p := filepath.Join(dir, rel)
		_, err := os.Stat(p)
		return p, err
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "shared", rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no shared/%s in any parent folder (set RW_SHARED)", rel)
		}
		dir = parent
	}
}

// loadShared loads the shared dbatools file; without it the test fails when
// CI=true and is skipped otherwise.
func loadShared(t *testing.T) *buildref.Reference {
	t.Helper()
	path, err := sharedList()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("shared dbatools build list missing under CI: %v", err)
		}
		t.Skipf("shared dbatools build list not found (%v); set CI=true to make this fail", err)
	}
	return loadFile(t, path)
}

func TestLoadSharedDbatools(t *testing.T) {
	ref := loadShared(t)
	if ref.Len() != 1153 {
		t.Errorf("Len = %d; want 1153", ref.Len())
	}
	if ref.LastUpdated() != "2026-07-16T00:00:00" {
		t.Errorf("LastUpdated = %q", ref.LastUpdated())
	}
	for _, tc := range []struct {
		ver string
		w   want
	}{
		{"13.0.4474.0", want{"2016 SP1 CU8", "SP1", "CU8", false, "KB4077064", false, true}},
		{"15.0.4236.7", want{"2019 CU16 + GDR (KB5014353)", "RTM", "CU16", true, "KB5014353", false, true}},
		{"17.0.4025.3", want{"2025 CU3", "RTM", "CU3", false, "KB5077896", false, true}},
		{"14.0.3048.4", want{"2017 CU13", "RTM", "CU13", false, "KB4466404", false, true}},
		{"14.0.3294.2", want{"2017 CU20", "RTM", "CU20", false, "KB4541283", false, true}},
		{"13.0.4001.0", want{"2016 SP1", "SP1", "", false, "KB3182545", false, true}},
		{"15.0.2000.5", want{"2019 RTM", "RTM", "", false, "", false, true}},
		{"16.0.1000.6", want{"2022 RTM", "RTM", "", false, "", false, true}},
		{"10.50.6542.0", want{"2008 R2 SP3 + GDR (KB3146034)", "SP3", "", true, "KB3146034", false, true}},
		{"13.0.2161.3", want{"2016 RTM CU1", "RTM", "CU1", false, "KB3164674", true, true}},
		{"8.0.2039", want{"2000 SP4", "SP4", "", false, "KB306908", false, true}},
	} {
		check(t, "dbatools "+tc.ver, ref.Lookup(v(tc.ver)), tc.w)
	}
	if r := ref.Lookup(v("14.0.3048.4")); r.ReleaseDate != "2018-12-18" {
		t.Errorf("14.0.3048 date %q; want 2018-12-18", r.ReleaseDate)
	}
	if r := ref.Lookup(v("17.0.4025.3")); r.ReleaseDate != "2026-03-12" {
		t.Errorf("17.0.4025 date %q; want 2026-03-12", r.ReleaseDate)
	}
	check(t, "dbatools resolve 13.0.2161.3", ref.Resolve(v("13.0.2161.3"), "RTM", "CU2", "KB3182270"),
		want{"2016 RTM CU2", "RTM", "CU2", false, "KB3182270", false, true})
}

// TestEmbeddedMatchesDbatools cross-checks every entry of the embedded list
// against the dbatools list: same build listed, same product, level, CU, GDR
// mark and KBs, and the same date and retired mark where the embedded entry
// states them.
func TestEmbeddedMatchesDbatools(t *testing.T) {
	dba := loadShared(t)
	own := buildref.Default()
	if own.Len() < 200 {
		t.Errorf("embedded list has %d builds; expected the full selection", own.Len())
	}
	for _, e := range own.Builds() {
		mine := own.Lookup(e)
		theirs := dba.Lookup(e)
		if theirs.Approximate {
			t.Errorf("%v (%s) is not in the dbatools list (nearest %v)", e, mine.Name(), theirs.Listed)
			continue
		}
		if mine.Product != theirs.Product || mine.Level != theirs.Level || mine.CU != theirs.CU ||
			mine.GDR != theirs.GDR || !slices.Equal(mine.KB, theirs.KB) ||
			mine.ReleaseDate != "" && mine.ReleaseDate != theirs.ReleaseDate || mine.Retired != theirs.Retired {
			t.Errorf("%v:\n embedded %+v\n dbatools %+v", e, mine, theirs)
		}
	}
	// Every CU of 2016 RTM/SP1/SP2, 2017, 2019, 2022 and 2025 that dbatools
	// knows is in the embedded list.
	for _, b := range dba.Builds() {
		r := dba.Lookup(b)
		if r.CU == "" || r.GDR || b.Major < 13 || b.Major == 13 && r.Level == "SP3" {
			continue
		}
		if m := own.Lookup(b); m.Approximate {
			t.Errorf("%v (%s) from dbatools is missing from the embedded list", b, r.Name())
		}
	}
	// The builds the reference notes name must be listed exactly.
	for _, s := range []string{"12.0.5579.0", "12.0.5589.7", "12.0.6024.0", "13.0.4474.0", "13.0.4502.0",
		"13.0.5026.0", "13.0.5149.0", "14.0.3025.34", "14.0.3026.27", "14.0.3048.4", "14.0.3294.2",
		"15.0.2000.5", "15.0.4236.7", "16.0.1000.6", "17.0.4025.3", "10.50.6000.34", "10.50.6542"} {
		if r := own.Lookup(v(s)); r.Approximate || !r.Known {
			t.Errorf("%s is not in the embedded list (got %s, approximate)", s, r.Name())
		}
	}
}
