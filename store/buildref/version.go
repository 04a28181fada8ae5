package buildref

import (
	"fmt"
	"strings"
)

// Version is a parsed SQL Server version, major.minor.build.revision
// (13.0.4474.0). A three-part version leaves Revision at 0.
type Version struct{ Major, Minor, Build, Revision int }

// maxPartDigits bounds each part so that it always fits an int; real parts
// have at most five digits.
const maxPartDigits = 9

// ParseVersion reads "13.0.4474.0", the three-part "13.0.4474" of build lists
// and "13.00.4474" / "9.00.5000.00" as the resource-database line and SQL
// Server 2005 print them. Leading zeros are accepted; signs, spaces inside,
// empty parts and more than four parts are not. Surrounding spaces are
// ignored.
func ParseVersion(s string) (Version, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return Version{}, fmt.Errorf("buildref: empty version")
	}
	parts := strings.Split(t, ".")
	if len(parts) != 3 && len(parts) != 4 {
		return Version{}, fmt.Errorf("buildref: version %q: want major.minor.build[.revision], got %d part(s)", s, len(parts))
	}
	var n [4]int
	for i, p := range parts {
		v, err := parsePart(p)
		if err != nil {
			return Version{}, fmt.Errorf("buildref: version %q: part %d %w", s, i+1, err)
		}
		n[i] = v
	}
	return Version{Major: n[0], Minor: n[1], Build: n[2], Revision: n[3]}, nil
}

// parsePart reads one dot-separated part: ASCII digits only, so "+1", "-1",
// "0x1" and "1_0" (which strconv would partly accept) are refused.
func parsePart(p string) (int, error) {
	switch {
	case p == "":
		return 0, fmt.Errorf("is empty")
	case len(p) > maxPartDigits:
		return 0, fmt.Errorf("%q is too long (more than %d digits)", p, maxPartDigits)
	}
	v := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a number", p)
		}
		v = v*10 + int(c-'0')
	}
	return v, nil
}

// String prints the four-part form, 13.0.4474.0.
func (v Version) String() string {
	return fmt.Sprintf("%d.%d.%d.%d", v.Major, v.Minor, v.Build, v.Revision)
}

// Compare orders versions part by part: -1 if v < o, 0 if equal, +1 if v > o.
func (v Version) Compare(o Version) int {
	a := [4]int{v.Major, v.Minor, v.Build, v.Revision}
	b := [4]int{o.Major, o.Minor, o.Build, o.Revision}
	for i := range a {
		switch {
		case a[i] < b[i]:
			return -1
		case a[i] > b[i]:
			return 1
		}
	}
	return 0
}

// sameBuild reports whether v and o agree on major, minor and build.
func (v Version) sameBuild(o Version) bool {
	return v.Major == o.Major && v.Minor == o.Minor && v.Build == o.Build
}

// sameProduct reports whether v and o belong to the same product line; 10.0
// (2008) and 10.50 (2008 R2) are different products.
func (v Version) sameProduct(o Version) bool {
	return v.Major == o.Major && v.Minor == o.Minor
}

// MajorName is the marketing name of a product line: 10.0 → "2008",
// 10.50 → "2008 R2", 11 → "2012", … 17 → "2025". It returns "" for a
// major/minor pair SQL Server never shipped (including minors other than 0,
// except 10.50).
func MajorName(major, minor int) string {
	if major == 10 {
		switch minor {
		case 0:
			return "2008"
		case 50:
			return "2008 R2"
		}
		return ""
	}
	if minor != 0 {
		return ""
	}
	switch major {
	case 8:
		return "2000"
	case 9:
		return "2005"
	case 11:
		return "2012"
	case 12:
		return "2014"
	case 13:
		return "2016"
	case 14:
		return "2017"
	case 15:
		return "2019"
	case 16:
		return "2022"
	case 17:
		return "2025"
	}
	return ""
}

// productKey is the compact product key used in Release.Product and
// Banner.Product, as dbatools spells it: "2008 R2" → "2008R2".
func productKey(name string) string {
	return strings.Join(strings.Fields(name), "")
}

// productDisplay turns a product key back into display form: "2008R2" →
// "2008 R2"; other keys are shown as they are.
func productDisplay(key string) string {
	if len(key) == 6 && strings.HasSuffix(key, "R2") && isDigits(key[:4]) {
		return key[:4] + " R2"
	}
	return key
}

// isDigits reports whether s is non-empty and all ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
