package errorlog

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/restorewatch/restorewatch/ingest/unwrap"
	"github.com/restorewatch/restorewatch/store"
)

// completionLine is what a restore completion message (18267, 18268, 18269,
// 18271, 18277) states.
type completionLine struct {
	db                string
	firstLSN, lastLSN string // numeric form; empty for file restores
	fileList          string // 18269/18277: the "file list: (...)" content
	devCount          int
	devType           string
	devices           []string
}

const anchorCreation = ", creation date(time): "

// parseCompletion parses the text after the message prefix:
// "Database: X, creation date(time): D(T), first LSN: a:b:c, last LSN: a:b:c,
// number of dump devices: N, device information: (FILE=1, TYPE=DISK: {'p'}). ..."
// or, for file restores, "..., file list: (f), number of dump devices: ...".
// The database name may hold commas, spaces and quotes, so it ends at the first
// creation anchor that is followed by "(time), first LSN:" or "(time), file
// list:", never at a comma.
func parseCompletion(s string) (completionLine, error) {
	var c completionLine
	rest, ok := strings.CutPrefix(s, "Database: ")
	if !ok {
		return c, errors.New(`no "Database: " after the message text`)
	}
	name, after := "", ""
	for off := 0; ; {
		i := strings.Index(rest[off:], anchorCreation)
		if i < 0 {
			return c, errors.New(`no ", creation date(time): " after the database name`)
		}
		i += off
		tail := rest[i+len(anchorCreation):]
		if j := strings.IndexByte(tail, ')'); j >= 0 &&
			(strings.HasPrefix(tail[j+1:], ", first LSN: ") || strings.HasPrefix(tail[j+1:], ", file list: ")) {
			name, after = rest[:i], tail[j+3:]
			break
		}
		off = i + 1
	}
	if name == "" {
		return c, errors.New("empty database name")
	}
	c.db = unwrap.Name(name)
	var err error
	if lsns, ok := strings.CutPrefix(after, "first LSN: "); ok {
		var first, last string
		first, lsns, ok = strings.Cut(lsns, ", last LSN: ")
		if !ok {
			return c, errors.New(`no "last LSN: "`)
		}
		last, after, ok = strings.Cut(lsns, ", ")
		if !ok {
			return c, errors.New("nothing after the last LSN")
		}
		if c.firstLSN, err = store.LSNFromLog(first); err != nil {
			return c, fmt.Errorf("first %w", err)
		}
		if c.lastLSN, err = store.LSNFromLog(last); err != nil {
			return c, fmt.Errorf("last %w", err)
		}
	} else {
		list := strings.TrimPrefix(after, "file list: ")
		k := strings.Index(list, ", number of dump devices: ")
		if k < 0 {
			return c, errors.New(`no "number of dump devices: " after the file list`)
		}
		c.fileList, after = list[:k], list[k+2:]
	}
	devs, ok := strings.CutPrefix(after, "number of dump devices: ")
	if !ok {
		return c, errors.New(`no "number of dump devices: "`)
	}
	n, info, ok := strings.Cut(devs, ", device information: ")
	if !ok {
		return c, errors.New(`no "device information: "`)
	}
	if c.devCount, err = strconv.Atoi(n); err != nil || c.devCount < 0 {
		return c, fmt.Errorf("number of dump devices %q is not a number", n)
	}
	c.devType, c.devices = parseDevices(info)
	return c, nil
}

// parseDevices reads "(FILE=1, TYPE=DISK[, MEDIANAME='m']: {'p1', 'p2'}). trailer".
// The brace content is split on "', '" (typographic quotes too): the format
// for several stripes, URLs and virtual devices has no public sample, so the
// list is kept as the log prints it. A truncated line keeps its whole paths.
func parseDevices(info string) (devType string, devices []string) {
	if t := strings.Index(info, "TYPE="); t >= 0 {
		v := info[t+5:]
		if e := strings.IndexAny(v, ",:)"); e >= 0 {
			v = v[:e]
		}
		devType = strings.TrimSpace(v)
	}
	start := 0
	if m := strings.Index(info, "MEDIANAME="); m >= 0 {
		// A media name may hold braces; the device list starts after it.
		start = m
		if e := strings.Index(info[m:], ": {"); e >= 0 {
			start = m + e
		}
	}
	open := strings.IndexByte(info[start:], '{')
	if open < 0 {
		return devType, nil
	}
	body := info[start+open+1:]
	complete := true
	if close := strings.LastIndexByte(body, '}'); close >= 0 {
		body = body[:close]
	} else {
		complete = false
	}
	body = strings.ReplaceAll(body, "’, ‘", "', '")
	parts := strings.Split(body, "', '")
	for i, d := range parts {
		d = strings.TrimSpace(d)
		last := i == len(parts)-1
		if last && !complete && !strings.HasSuffix(d, "'") && !strings.HasSuffix(d, "’") {
			break // cut off mid-path
		}
		d = strings.TrimPrefix(strings.TrimPrefix(d, "'"), "‘")
		d = strings.TrimSuffix(strings.TrimSuffix(d, "'"), "’")
		if d != "" {
			devices = append(devices, d)
		}
	}
	return devType, devices
}

// line3014Fields is a parsed "<stmt> successfully processed N pages in X
// seconds (Y MB/sec)." line.
type line3014Fields struct {
	stmt    string
	pages   int64
	seconds float64
	mbps    float64
}

func parse3014(s string) (line3014Fields, error) {
	var f line3014Fields
	stmt, rest, ok := strings.Cut(s, " successfully processed ")
	if !ok {
		return f, errors.New("no \"successfully processed\"")
	}
	f.stmt = strings.Join(strings.Fields(stmt), " ")
	pages, rest, ok := strings.Cut(rest, " pages in ")
	if !ok {
		return f, errors.New(`no "pages in"`)
	}
	secs, rest, ok := strings.Cut(rest, " seconds")
	if !ok {
		return f, errors.New(`no "seconds"`)
	}
	var err error
	if f.pages, err = strconv.ParseInt(pages, 10, 64); err != nil || f.pages < 0 {
		return f, fmt.Errorf("pages %q is not a count", pages)
	}
	if f.seconds, err = strconv.ParseFloat(secs, 64); err != nil || f.seconds < 0 || !isDecimal(secs) {
		return f, fmt.Errorf("seconds %q is not a number", secs)
	}
	// MB/sec is the engine's own arithmetic; keep it when it reads.
	if _, mb, ok := strings.Cut(rest, "("); ok {
		if v, _, ok := strings.Cut(mb, " MB/sec"); ok && isDecimal(v) {
			f.mbps, _ = strconv.ParseFloat(v, 64)
		}
	}
	return f, nil
}

// isDecimal accepts the engine's "%d.%03d" and rejects what ParseFloat also
// takes (Inf, NaN, hex, exponents).
func isDecimal(s string) bool {
	dot := false
	for i := 0; i < len(s); i++ {
		switch {
		case isDigit(s[i]):
		case s[i] == '.' && !dot && i > 0:
			dot = true
		default:
			return false
		}
	}
	return s != ""
}

// kindOfStatement maps a 3014 statement to a restore kind when no completion
// line says better; a differential restore also prints RESTORE DATABASE.
func kindOfStatement(stmt string) store.Kind {
	u := strings.ToUpper(stmt)
	switch {
	case strings.HasPrefix(u, "RESTORE LOG"):
		return store.KindLog
	case strings.Contains(u, " PAGE"):
		return store.KindPage
	case strings.Contains(u, " FILE"):
		return store.KindFile
	}
	// The 3014 line of a full and of a differential read the same; only a
	// completion line (18267 or 18271) tells them apart.
	return store.KindFullOrDiff
}

// fits reports whether a 3014 statement can belong to a completion of kind k.
func fits(stmt string, k store.Kind) bool {
	u := strings.ToUpper(stmt)
	switch {
	case strings.HasPrefix(u, "RESTORE LOG"):
		return k == store.KindLog
	case strings.HasPrefix(u, "RESTORE DATABASE"):
		return k != store.KindLog
	}
	return true
}

// parse3421 reads "Recovery completed for database X (database ID n) in N
// second(s) (analysis A ms, redo R ms, undo U ms[ [...]].)[ ADR-enabled=0, ...]".
func parse3421(s string) (db string, rt store.RecoveryTiming, err error) {
	rest := strings.TrimPrefix(s, "Recovery completed for database ")
	i := strings.LastIndex(rest, " (database ID ")
	if i <= 0 {
		return "", rt, errors.New(`no "(database ID n)"`)
	}
	db, rest = rest[:i], rest[i+len(" (database ID "):]
	_, rest, ok := strings.Cut(rest, ") in ")
	if !ok {
		return "", rt, errors.New(`no ") in N second(s)"`)
	}
	secs, rest, ok := strings.Cut(rest, " second(s) (analysis ")
	if !ok {
		return "", rt, errors.New(`no "second(s) (analysis"`)
	}
	an, rest, ok1 := strings.Cut(rest, " ms, redo ")
	redo, rest, ok2 := strings.Cut(rest, " ms, undo ")
	undo, _, ok3 := strings.Cut(rest, " ms")
	if !ok1 || !ok2 || !ok3 {
		return "", rt, errors.New("no analysis/redo/undo timings")
	}
	for _, f := range []struct {
		s string
		v *int64
	}{{secs, &rt.Seconds}, {an, &rt.AnalysisMs}, {redo, &rt.RedoMs}, {undo, &rt.UndoMs}} {
		if *f.v, err = strconv.ParseInt(f.s, 10, 64); err != nil || *f.v < 0 {
			return "", rt, fmt.Errorf("timing %q is not a number", f.s)
		}
	}
	return db, rt, nil
}

// quotedAfter returns the name between prefix+"'" and the last "'" + suffix,
// for lines such as "Restore is complete on database 'X'.  The database ...".
// Names may hold quotes, so the closing quote is found from the right.
func quotedAfter(s, prefix, suffix string) string {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return ""
	}
	i := strings.LastIndex(rest, suffix)
	if i < 0 {
		return ""
	}
	return unwrap.Name(rest[:i])
}
