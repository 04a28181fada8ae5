package view

import (
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
)

// Instance and database names can hold anything SQL Server allows: "/",
// "\", quotes, "<script>", "..". A path segment is url.PathEscape'd, except
// for names a browser would rewrite before sending ("", ".", "..", which
// dot-segment removal eats even when percent-encoded) and names starting
// with "~": those become "~" and the name in unpadded base64url. Segment and
// ParseSegment are inverses for every string.

// Segment encodes name as one URL path segment.
func Segment(name string) string {
	if name == "" || name == "." || name == ".." || strings.HasPrefix(name, "~") {
		return "~" + base64.RawURLEncoding.EncodeToString([]byte(name))
	}
	return url.PathEscape(name)
}

// ParseSegment decodes a segment made by Segment (from the escaped path).
func ParseSegment(seg string) (string, bool) {
	if rest, ok := strings.CutPrefix(seg, "~"); ok {
		b, err := base64.RawURLEncoding.DecodeString(rest)
		return string(b), err == nil
	}
	s, err := url.PathUnescape(seg)
	return s, err == nil
}

// InstanceURL links to an instance's page.
func InstanceURL(name string) string { return "/instances/" + Segment(name) }

// DatabaseURL links to a database's page on an instance.
func DatabaseURL(instance, database string) string {
	return InstanceURL(instance) + "/databases/" + Segment(database)
}

// DatabaseKindURL links to one kind (full, diff, log) of a database's page.
func DatabaseKindURL(instance, database, kind string) string {
	return DatabaseURL(instance, database) + "?kind=" + url.QueryEscape(kind)
}

// RestoreURL links to one restore.
func RestoreURL(id int64) string { return "/restores/" + strconv.FormatInt(id, 10) }

// RegressionURL links to one regression.
func RegressionURL(id int64) string { return "/regressions/" + strconv.FormatInt(id, 10) }

// RegressionReportURL links to the printable report of a regression.
func RegressionReportURL(id int64) string { return "/reports/regressions/" + strconv.FormatInt(id, 10) }

// RestoresURL links to the restores list with the given filters; empty
// values are left out so links stay short.
func RestoresURL(kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if len(q) == 0 {
		return "/restores"
	}
	return "/restores?" + q.Encode()
}

// CompareURL links to the compare page for two operands.
func CompareURL(a, b string) string {
	return "/compare?" + url.Values{"a": {a}, "b": {b}}.Encode()
}
