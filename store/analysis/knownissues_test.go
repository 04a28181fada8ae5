package analysis_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/store/analysis"
)

func ids(kis []analysis.KnownIssue) []string {
	var out []string
	for _, ki := range kis {
		out = append(out, ki.ID)
	}
	return out
}

func TestDefaultKnownIssues(t *testing.T) {
	cat := analysis.DefaultKnownIssues()
	got := ids(cat)
	for _, want := range []string{"KB4088193", "KB4052135", "KB4058175", "KB4230306", "KB4101502", "KB4136912", "KB4101482", "KB2455009", "KB2028436"} {
		if !slices.Contains(got, want) {
			t.Errorf("catalogue lacks %s", want)
		}
	}
	i := slices.Index(got, "KB4088193")
	ki := cat[i]
	if !strings.Contains(ki.Source, "UNVERIFIED") {
		t.Errorf("KB4088193 source must say the KB is unverified: %q", ki.Source)
	}
	if want := []string{"12.0.5589.7", "12.0.6024.0", "13.0.4502.0", "13.0.5149.0", "14.0.3026.27"}; !slices.Equal(ki.FixBuilds, want) {
		t.Errorf("fix builds %v, want %v", ki.FixBuilds, want)
	}
	cat[0].ID = "changed"
	if analysis.DefaultKnownIssues()[0].ID == "changed" {
		t.Errorf("DefaultKnownIssues shares state between callers")
	}
}

func TestMatchKnownIssues(t *testing.T) {
	cat := analysis.DefaultKnownIssues()
	slow4k := map[string]bool{"compressed": true, "io_alignment_4096": true}
	for _, tc := range []struct {
		build string
		conds map[string]bool
		want  []string
	}{
		{"13.0.4474.0", slow4k, []string{"KB4088193"}},            // 2016 SP1 CU8
		{"13.0.4474", slow4k, []string{"KB4088193"}},              // three-part, as dbatools writes it
		{"13.0.4502.0", slow4k, nil},                              // 2016 SP1 CU9: fixed
		{"13.0.5026.0", slow4k, []string{"KB4088193"}},            // 2016 SP2 RTM
		{"13.0.5149.0", slow4k, nil},                              // 2016 SP2 CU1
		{"13.0.2164.0", slow4k, nil},                              // 2016 RTM CU2: before the affected range
		{"12.0.5579.0", slow4k, []string{"KB4088193"}},            // 2014 SP2 CU11
		{"12.0.5589.7", slow4k, nil},                              // 2014 SP2 CU12
		{"12.0.6024.0", slow4k, nil},                              // 2014 SP3
		{"14.0.3025.34", slow4k, []string{"KB4088193"}},           // 2017 CU6
		{"14.0.3026.27", slow4k, nil},                             // 2017 CU7
		{"15.0.2000.5", slow4k, nil},                              // 2019: other major
		{"13.0.4474.0", map[string]bool{"compressed": true}, nil}, // 512-byte disk
		{"13.0.4474.0", map[string]bool{"compressed": true, "tde": true, "vdi": true, "io_alignment_4096": false},
			[]string{"KB4230306", "KB4101502"}},
		{"10.50.6000.34", map[string]bool{"many_vlfs": true}, []string{"KB2455009", "KB2028436"}},
		{"not a build", map[string]bool{"many_vlfs": true}, []string{"KB2028436"}},
		{"13.0.4474.0", nil, nil},
	} {
		if got := ids(analysis.MatchKnownIssues(cat, tc.build, tc.conds)); !slices.Equal(got, tc.want) {
			t.Errorf("%s %v: got %v, want %v", tc.build, tc.conds, got, tc.want)
		}
	}
}

func TestLoadKnownIssues(t *testing.T) {
	good := `[{"id":"KB1","title":"t","affected":[{"major":15,"from":"15.0.2000.5","fixed":"15.0.4003.23"}],"conditions":["compressed"],"fix_builds":["15.0.4003.23"],"source":"mine"}]`
	cat, err := analysis.LoadKnownIssues(strings.NewReader(good))
	if err != nil || len(cat) != 1 || cat[0].Affected[0].Fixed != "15.0.4003.23" {
		t.Fatalf("got %+v, %v", cat, err)
	}
	if got := ids(analysis.MatchKnownIssues(cat, "15.0.4000.0", map[string]bool{"compressed": true})); !slices.Equal(got, []string{"KB1"}) {
		t.Errorf("user issue does not match: %v", got)
	}
	for name, bad := range map[string]string{
		"not json":      `{`,
		"no id":         `[{"id":""}]`,
		"bad from":      `[{"id":"KB2","affected":[{"major":15,"from":"fifteen"}]}]`,
		"wrong major":   `[{"id":"KB2","affected":[{"major":14,"from":"15.0.1.0"}]}]`,
		"fixed <= from": `[{"id":"KB2","affected":[{"major":15,"from":"15.0.9.0","fixed":"15.0.1.0"}]}]`,
		"bad fix build": `[{"id":"KB2","fix_builds":["x"]}]`,
		"unknown field": `[{"id":"KB2","fixed_in":"15.0.1.0"}]`,
	} {
		if _, err := analysis.LoadKnownIssues(strings.NewReader(bad)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func FuzzLoadKnownIssues(f *testing.F) {
	f.Add(`[{"id":"KB1","affected":[{"major":15,"from":"15.0.2000.5","fixed":""}]}]`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, s string) {
		cat, err := analysis.LoadKnownIssues(strings.NewReader(s))
		if err != nil {
			return
		}
		// Whatever loads must match without panicking.
		analysis.MatchKnownIssues(cat, "15.0.4000.0", map[string]bool{"compressed": true})
	})
}
