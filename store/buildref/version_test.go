package buildref_test

import (
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/store/buildref"
)

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want buildref.Version
	}{
		{"13.0.4474.0", buildref.Version{Major: 13, Build: 4474}},
		{"13.0.4474", buildref.Version{Major: 13, Build: 4474}},
		{"13.00.4474", buildref.Version{Major: 13, Build: 4474}},  // resource DB line
		{"9.00.5000.00", buildref.Version{Major: 9, Build: 5000}}, // SQL Server 2005 @@VERSION
		{"10.50.6000.34", buildref.Version{Major: 10, Minor: 50, Build: 6000, Revision: 34}},
		{"15.0.2000.1574", buildref.Version{Major: 15, Build: 2000, Revision: 1574}},
		{" 17.0.4025.3 ", buildref.Version{Major: 17, Build: 4025, Revision: 3}},
	} {
		got, err := buildref.ParseVersion(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseVersionErrors(t *testing.T) {
	for _, tc := range []struct{ in, wantErr string }{
		{"", "empty version"},
		{"   ", "empty version"},
		{"13", "got 1 part(s)"},
		{"13.0", "got 2 part(s)"},
		{"13.0.4474.0.1", "got 5 part(s)"},
		{"13.0..0", `part 3 is empty`},
		{"13.0.4474.", `part 4 is empty`},
		{"a.b.c", `part 1 "a" is not a number`},
		{"13.0.-1", `part 3 "-1" is not a number`},
		{"13.0.+1", `part 3 "+1" is not a number`},
		{"13.0.0x1", `part 3 "0x1" is not a number`},
		{"13.0. 4474", `part 3 " 4474" is not a number`},
		{"13.0.4474.0 (X64)", `part 4 "0 (X64)" is not a number`},
		{"13.0.1234567890", `part 3 "1234567890" is too long`},
		{"١٣.0.4474", `part 1 "١٣" is not a number`},
	} {
		_, err := buildref.ParseVersion(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("ParseVersion(%q) error = %v; want it to contain %q", tc.in, err, tc.wantErr)
			continue
		}
		if !strings.HasPrefix(err.Error(), "buildref: ") {
			t.Errorf("ParseVersion(%q) error %q lacks the package prefix", tc.in, err)
		}
	}
}

func TestVersionStringCompare(t *testing.T) {
	v := buildref.Version{Major: 13, Build: 4474}
	if got, want := v.String(), "13.0.4474.0"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
	order := []string{"10.0.6000", "10.50.1600", "13.0.2149", "13.0.2161.3", "13.0.2164", "13.0.2164.1", "15.0.2000"}
	for i := range order {
		for j := range order {
			a, _ := buildref.ParseVersion(order[i])
			b, _ := buildref.ParseVersion(order[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := a.Compare(b); got != want {
				t.Errorf("%s.Compare(%s) = %d; want %d", order[i], order[j], got, want)
			}
		}
	}
}

func TestMajorName(t *testing.T) {
	for _, tc := range []struct {
		major, minor int
		want         string
	}{
		{8, 0, "2000"}, {9, 0, "2005"}, {10, 0, "2008"}, {10, 50, "2008 R2"}, {11, 0, "2012"},
		{12, 0, "2014"}, {13, 0, "2016"}, {14, 0, "2017"}, {15, 0, "2019"}, {16, 0, "2022"},
		{17, 0, "2025"}, {18, 0, ""}, {10, 25, ""}, {13, 1, ""}, {7, 0, ""}, {-1, 0, ""},
	} {
		if got := buildref.MajorName(tc.major, tc.minor); got != tc.want {
			t.Errorf("MajorName(%d, %d) = %q; want %q", tc.major, tc.minor, got, tc.want)
		}
	}
}
