package buildref

import "strings"

// Banner is what the first line of the startup banner (error log) or
// @@VERSION says about the build:
//
//	Microsoft SQL Server 2016 (SP1-CU8) (KB4077064) - 13.0.4474.0 (X64)
type Banner struct {
	// Product is the compact product key, "2019", "2008R2" (as in
	// Release.Product); for a pre-release name such as "vNext" it comes from
	// the version. Other engines keep their name: "Azure SQL Edge",
	// "Azure SQL".
	Product string
	// Level is "RTM", "SP1", "CTP2.1"…; "" when the banner has no level
	// group (2005, and 2012/2014 RTM print none).
	Level string
	// CU is "CU8" or "".
	CU string
	// GDR is true when the level group ends in "-GDR".
	GDR bool
	// KB is "KB4077064" or "" when the banner has no KB group.
	KB string
	// Version is the build.
	Version Version
	// Arch is the architecture as printed: "X64", "ARM64", "Intel X86"; ""
	// when absent (Azure SQL prints none).
	Arch string
}

// bannerPrefixes are the engine names a banner starts with, and the product
// each stands for ("" = the product follows, e.g. "2019").
var bannerPrefixes = []struct{ text, product string }{
	{"Microsoft SQL Server", ""},
	{"Microsoft Azure SQL Edge", "Azure SQL Edge"},
	{"Microsoft SQL Azure", "Azure SQL"},
}

// ParseBanner reads a banner line. It accepts the bare line, an error-log
// line with its "2019-05-03 09:01:09.99 Server      " prefix, or a whole
// multi-line @@VERSION value (only the first line is read); trailing spaces,
// runs of spaces and a missing architecture are tolerated. The forms it
// knows:
//
//	Microsoft SQL Server 2019 (RTM-CU16-GDR) (KB5014353) - 15.0.4236.7 (X64)
//	Microsoft SQL Server 2019 (RTM) - 15.0.2000.5 (X64)
//	Microsoft SQL Server 2008 R2 (SP3) - 10.50.6000.34 (X64)
//	Microsoft SQL Server 2012 - 11.0.2100.60 (X64)
//	Microsoft SQL Server  2000 - 8.00.2039 (Intel X86)
//	Microsoft SQL Server vNext (CTP2.0) - 14.0.500.272 (X64)
//	Microsoft Azure SQL Edge Developer (RTM) - 15.0.2000.1574 (ARM64)
//	Microsoft SQL Azure (RTM) - 12.0.2000.8
//
// It reports false when the line is not a banner.
func ParseBanner(line string) (Banner, bool) {
	if i := strings.IndexAny(line, "\r\n"); i >= 0 {
		line = line[:i]
	}
	start, prefix, product := -1, "", ""
	for _, p := range bannerPrefixes {
		if i := strings.Index(line, p.text); i >= 0 && (start < 0 || i < start) {
			start, prefix, product = i, p.text, p.product
		}
	}
	if start < 0 {
		return Banner{}, false
	}
	rest := line[start+len(prefix):]
	head, tail, ok := strings.Cut(rest, " - ")
	if !ok || head != "" && head[0] != ' ' && head[0] != '\t' {
		return Banner{}, false // "Microsoft SQL Serverless - …" is not a banner
	}
	var b Banner
	name, groups, _ := strings.Cut(head, "(")
	if groups != "" {
		groups = "(" + groups
	}
	if !b.readGroups(groups) {
		return Banner{}, false
	}
	if !b.readTail(tail) {
		return Banner{}, false
	}
	name = strings.Join(strings.Fields(name), " ")
	if product != "" {
		b.Product = product
		return b, true
	}
	switch {
	case isYear(name) || strings.HasSuffix(name, " R2") && isYear(strings.TrimSuffix(name, " R2")):
		b.Product = productKey(name)
	case strings.EqualFold(name, "vNext") && MajorName(b.Version.Major, b.Version.Minor) != "":
		b.Product = productKey(MajorName(b.Version.Major, b.Version.Minor)) // "vNext"
	default:
		return Banner{}, false
	}
	return b, true
}

// readGroups reads "(SP1-CU8) (KB4077064)": the first non-KB group is the
// level group, a "(KBnnn)" group is the KB; other groups are ignored.
func (b *Banner) readGroups(s string) bool {
	seenLevel := false
	for {
		s = strings.TrimSpace(s)
		if s == "" {
			return true
		}
		if s[0] != '(' {
			return false
		}
		g, after, ok := strings.Cut(s[1:], ")")
		if !ok {
			return false
		}
		s = after
		if kb := normKB(g); kb != "" && strings.HasPrefix(strings.ToUpper(strings.TrimSpace(g)), "KB") {
			if b.KB == "" {
				b.KB = kb
			}
			continue
		}
		if seenLevel {
			continue
		}
		seenLevel = true
		level, cu, gdr := parseLevelGroup(g)
		if level == "" && cu == "" && !gdr {
			return false
		}
		b.Level, b.CU, b.GDR = level, cu, gdr
	}
}

// readTail reads "15.0.4236.7 (X64) " and anything after the architecture
// (flattened @@VERSION text).
func (b *Banner) readTail(s string) bool {
	s = strings.TrimLeft(s, " \t")
	ver, after, _ := strings.Cut(s, " ")
	if i := strings.IndexByte(ver, '\t'); i >= 0 {
		ver, after = ver[:i], ver[i:]
	}
	v, err := ParseVersion(ver)
	if err != nil {
		return false
	}
	b.Version = v
	after = strings.TrimLeft(after, " \t")
	if strings.HasPrefix(after, "(") {
		if arch, _, ok := strings.Cut(after[1:], ")"); ok {
			b.Arch = strings.Join(strings.Fields(arch), " ")
		}
	}
	return true
}

// isYear reports whether s is four digits.
func isYear(s string) bool { return len(s) == 4 && isDigits(s) }
