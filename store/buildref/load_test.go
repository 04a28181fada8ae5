package buildref_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/store/buildref"
)

// testdata/dbatools-mini.json is a short hand-written file in dbatools format:
// Name, SP carried forward, CUs, GDR chains, an RC pair with revisions, a
// retired build, KBList as string and as array.
func TestLoadDbatoolsFormat(t *testing.T) {
	ref := loadFile(t, "testdata/dbatools-mini.json")
	if ref.Len() != 20 || ref.LastUpdated() != "2026-07-16T00:00:00" {
		t.Fatalf("Len %d LastUpdated %q; want 20, 2026-07-16T00:00:00", ref.Len(), ref.LastUpdated())
	}
	for _, tc := range []struct {
		ver string
		w   want
	}{
		{"10.50.1092", want{"2008 R2", "", "", false, "", false, true}}, // Name entry, before RTM
		{"10.50.6000.34", want{"2008 R2 SP3", "SP3", "", false, "KB2979597", false, true}},
		{"10.50.6542", want{"2008 R2 SP3 + GDR (KB3146034)", "SP3", "", true, "KB3146034", false, true}},
		{"10.50.6560", want{"2008 R2 SP3 + GDR (KB4057113)", "SP3", "", true, "KB4057113", false, true}},
		{"10.50.9999", want{"2008 R2 SP3 + GDR (KB4057113)", "SP3", "", true, "KB4057113", true, true}},
		{"13.0.200", want{"2016", "", "", false, "", false, true}},
		{"13.0.2149", want{"2016 RTM CU1", "RTM", "CU1", false, "KB3164674", false, true}},
		{"13.0.2161.3", want{"2016 RTM CU1", "RTM", "CU1", false, "KB3164674", true, true}},
		{"13.0.2186", want{"2016 RTM CU3", "RTM", "CU3", false, "KB3205413", false, true}},
		{"15.0.1900.25", want{"2019 RC", "RC", "", false, "", false, true}},
		{"15.0.1900.47", want{"2019 RC", "RC", "", false, "", false, true}},
		{"15.0.1900.30", want{"2019 RC", "RC", "", false, "", true, true}}, // revision between the two
		{"15.0.2000.5", want{"2019 RTM", "RTM", "", false, "", false, true}},
		{"15.0.2070.41", want{"2019 RTM + GDR (KB4517790)", "RTM", "", true, "KB4517790", false, true}},
		{"15.0.4003.23", want{"2019 CU1", "RTM", "CU1", false, "KB4527376", false, true}},
		{"15.0.4236.7", want{"2019 CU16 + GDR (KB5014353)", "RTM", "CU16", true, "KB5014353", false, true}},
		{"15.0.4249.2", want{"2019 CU17", "RTM", "CU17", false, "KB5016394", false, true}},
	} {
		check(t, "mini "+tc.ver, ref.Lookup(v(tc.ver)), tc.w)
	}
	if r := ref.Lookup(v("13.0.2186")); !slices.Equal(r.KB, []string{"KB3205413", "KB3194717"}) {
		t.Errorf("13.0.2186 KB = %v; want both KBs of the array", r.KB)
	}
	if r := ref.Lookup(v("15.0.4013")); !r.Retired || r.ReleaseDate != "2020-02-13" {
		t.Errorf("15.0.4013: Retired %v date %q; want true, 2020-02-13", r.Retired, r.ReleaseDate)
	}
	if r := ref.Lookup(v("15.0.1900.47")); r.Listed != v("15.0.1900.47") {
		t.Errorf("15.0.1900.47: Listed %v", r.Listed)
	}
}

func TestLoadKBListForms(t *testing.T) {
	ref, err := buildref.Load(strings.NewReader("\ufeff" + `{"Data": [
		{"Version": "13.0.1601", "Name": "2016", "SP": "RTM"},
		{"Version": "13.0.2149", "CU": "CU1", "KBList": "3164674"},
		{"Version": "13.0.2164", "CU": "CU2", "KBList": ["3182270"]},
		{"Version": "13.0.2170", "CU": "CU2", "KBList": 3199171},
		{"Version": "13.0.2186", "CU": "CU3", "KBList": ["3205413", "KB3194717"]},
		{"Version": "13.0.2190", "KBList": null},
		{"Version": "13.0.2193", "KBList": []},
		{"Version": "13.0.2197", "KBList": ""}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ver  string
		want []string
	}{
		{"13.0.1601", nil},
		{"13.0.2149", []string{"KB3164674"}},
		{"13.0.2164", []string{"KB3182270"}},
		{"13.0.2170", []string{"KB3199171"}},
		{"13.0.2186", []string{"KB3205413", "KB3194717"}},
		{"13.0.2190", nil},
		{"13.0.2193", nil},
		{"13.0.2197", nil},
	} {
		if got := ref.Lookup(v(tc.ver)).KB; !slices.Equal(got, tc.want) {
			t.Errorf("%s KB = %q; want %q", tc.ver, got, tc.want)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct{ in, wantErr string }{
		{"", "not a build list"},
		{"   ", "not a build list"},
		{"<html>", "not a build list"},
		{"{", "dbatools format"},
		{`{"LastUpdated": "x"}`, `no builds in "Data"`},
		{`{"Data": []}`, `no builds in "Data"`},
		{`{"Data": [{"Version": "13.0"}]}`, "Data[0]"},
		{`{"Data": [{"Version": "18.0.100"}]}`, "no product name for 18.0.100"},
		{`{"Data": [{"Version": "13.0.1601", "KBList": {"a": 1}}]}`, "KB list"},
		{`{"Data": [{"Version": "13.0.1601", "KBList": "Q123"}]}`, `"Q123" is not a KB number`},
		{`{"Data": [{"Version": "13.0.1601", "SP": "RTM"}, {"Version": "13.0.1601.0"}]}`, "listed twice"},
		{`[]`, "no builds"},
		{`[{"v": "13.0.1601"}]`, `"level" is required`},
		{`[{"v": "13.0.1601", "level": "RTM", "kbs": "KB1"}]`, `unknown field "kbs"`},
		{`[{"v": "13.0.1601", "level": "RTM", "cu": "8"}]`, `cu "8" is not CUn`},
		{`[{"v": "18.0.1000", "level": "RTM"}]`, "unknown product line"},
		{`[{"v": "x", "level": "RTM"}]`, "[0]"},
	} {
		_, err := buildref.Load(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), "buildref: load: ") {
			t.Errorf("Load(%q) error = %v; want buildref: load: …%s…", tc.in, err, tc.wantErr)
		}
	}
}
