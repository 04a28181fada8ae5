package demo

import (
	"strings"
)

// engineBuild is a real SQL Server build as its startup banner prints it.
// Every version is in store/buildref's list (a test checks), so the build
// names the demo shows are the ones a user would see. The build dates of
// 14.0.3048.4 and 15.0.4236.7 are copied from real banners (reference §4.1,
// §4.2); the others are plausible, not verified.
type engineBuild struct {
	version string // four-part, as the banner prints it
	product string // "2016"
	level   string // the banner's level group: "SP1-CU8", "RTM-CU16-GDR"
	kb      string
	built   string // banner line 2
	dbver   int    // internal database version of the product (msg 944)
}

var engineBuilds = []engineBuild{
	{"10.50.6542.0", "2008 R2", "SP3-GDR", "KB3146034", "Mar  3 2016 18:53:25", 661},
	{"13.0.4474.0", "2016", "SP1-CU8", "KB4077064", "Feb 24 2018 13:53:17", 852},
	{"13.0.5149.0", "2016", "SP2-CU1", "KB4135048", "May 19 2018 09:41:29", 852},
	{"14.0.3026.27", "2017", "RTM-CU7", "KB4229789", "May 10 2018 12:38:55", 869},
	{"14.0.3048.4", "2017", "RTM-CU13", "KB4466404", "Nov 30 2018 12:57:58", 869},
	{"15.0.4236.7", "2019", "RTM-CU16-GDR", "KB5014353", "May 29 2022 15:55:47", 904},
	{"15.0.4355.3", "2019", "RTM-CU25", "KB5033688", "Jan 30 2024 17:02:22", 904},
	{"16.0.4135.4", "2022", "RTM-CU14", "KB5038325", "Jul 10 2024 13:38:03", 957},
}

// buildOf returns the table entry of a four-part or three-part version.
func buildOf(v string) engineBuild {
	for _, b := range engineBuilds {
		if b.version == v || strings.HasPrefix(b.version, v+".") {
			return b
		}
	}
	panic("demo: unknown build " + v) // the plan only uses builds of the table
}

// threePart is the backupset software_{major,minor,build}_version form.
func threePart(v string) string {
	return v[:strings.LastIndexByte(v, '.')]
}

// major returns the major version number.
func (b engineBuild) major() int {
	n := 0
	for i := 0; i < len(b.version) && b.version[i] != '.'; i++ {
		n = n*10 + int(b.version[i]-'0')
	}
	return n
}

// bannerLines returns the four banner lines (the first carries the entry's
// timestamp, the others are TAB continuations). 2019 and later end lines 1
// and 2 with a space, as the real banners do (reference §4.2).
func (b engineBuild) bannerLines(in *instance, hw hardware) []string {
	trail := ""
	if b.major() >= 15 {
		trail = " "
	}
	first := "Microsoft SQL Server " + b.product + " (" + b.level + ") (" + b.kb + ") - " + b.version + " (X64)" + trail
	copyright := "Copyright (c) Microsoft Corporation"
	if b.major() >= 14 {
		copyright = "Copyright (C) " + b.product + " Microsoft Corporation"
	}
	host := in.edition + " (64-bit) on " + in.os
	if in.linux {
		host += " <X64>"
	} else if hw.hypervisor {
		host += " (Hypervisor)"
	}
	return []string{first, "\t" + b.built + trail, "\t" + copyright, "\t" + host}
}

// resourceVersion is the "resource database build version" text: 15.00.4236.
func (b engineBuild) resourceVersion() string {
	parts := strings.Split(b.version, ".")
	minor := parts[1]
	if len(minor) < 2 {
		minor = "0" + minor
	}
	return parts[0] + "." + minor + "." + parts[2]
}

// recoveryLine is message 3421 in the wording of the build: 2019 added the
// undo bracket, 2022 the ADR suffix (reference §2.4, §4.10).
func (b engineBuild) recoveryLine(db string, dbid int, secs, analysis, redo, undo int64) string {
	var sb strings.Builder
	sb.WriteString("Recovery completed for database ")
	sb.WriteString(db)
	sb.WriteString(" (database ID ")
	sb.WriteString(itoa(int64(dbid)))
	sb.WriteString(") in ")
	sb.WriteString(itoa(secs))
	sb.WriteString(" second(s) (analysis ")
	sb.WriteString(itoa(analysis))
	sb.WriteString(" ms, redo ")
	sb.WriteString(itoa(redo))
	sb.WriteString(" ms, undo ")
	sb.WriteString(itoa(undo))
	if b.major() >= 15 {
		sb.WriteString(" ms [system undo 0 ms, regular undo ")
		sb.WriteString(itoa(undo))
		sb.WriteString(" ms].)")
	} else {
		sb.WriteString(" ms.)")
	}
	if b.major() >= 16 {
		sb.WriteString(" ADR-enabled=0, Is primary=1, OL-Enabled=0.")
	}
	sb.WriteString(" This is an informational message only. No user action is required.")
	return sb.String()
}
