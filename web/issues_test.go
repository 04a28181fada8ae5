package web_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web"
	"github.com/restorewatch/restorewatch/web/view"
)

// internalText is what the known-issue catalogue keeps for its maintainers
// (where each fact comes from, what is unverified) and a reader must never
// see (issue 15 item 1).
var internalText = regexp.MustCompile(`UNVERIFIED|Source: |reference/sqlserver|sqlserver-formats|Project seeds|§5`)

// TestKnownIssueBoxForReaders: every evidence page and report names its
// known issues in words, with the builds that fix them, their KB articles
// linked on Microsoft's support site, and without the catalogue's
// provenance; the demo's seed-003 story (backups now written by 2016 SP1
// CU8) says which changed factor the issue explains.
func TestKnownIssueBoxForReaders(t *testing.T) {
	db := demoDB(t)
	_, ts := serve(t, web.Config{DB: db})
	c := client(t)
	regs, err := db.ListRegressions(t.Context(), store.RegressionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, r := range regs {
		for _, u := range []string{view.RegressionURL(r.ID), view.RegressionReportURL(r.ID)} {
			code, body, _ := get(t, c, ts.URL+u)
			if code != http.StatusOK {
				t.Fatalf("GET %s = %d", u, code)
			}
			if m := internalText.FindString(body); m != "" {
				t.Errorf("%s shows the catalogue's internal text %q", u, m)
			}
			if !strings.Contains(body, "KB4088193") {
				continue
			}
			seen = true
			for _, want := range []string{"Compressed backup and 4 KiB I/O alignment", "2017 CU7",
				`href="https://support.microsoft.com/help/4229789"`, "Matches:", "source build (of the backup)"} {
				if !strings.Contains(body, want) {
					t.Errorf("%s: the KB4088193 box lacks %q", u, want)
				}
			}
			for _, key := range []string{"io_alignment_4096", "compressed,"} {
				if strings.Contains(body, key) {
					t.Errorf("%s shows the condition key %q instead of words", u, key)
				}
			}
		}
	}
	if !seen {
		t.Fatal("no demo regression cites KB4088193: the test checks nothing")
	}
}

// TestBuildsPageNoIssueOnItsFixBuild: the builds page listed KB4088193
// against 14.0.3026 (a backup's source build, recorded in three parts), the
// very update that fixes it (issue 15 item 2).
func TestBuildsPageNoIssueOnItsFixBuild(t *testing.T) {
	db := demoDB(t)
	_, ts := serve(t, web.Config{DB: db})
	code, body, _ := get(t, client(t), ts.URL+"/builds")
	if code != http.StatusOK {
		t.Fatalf("GET /builds = %d", code)
	}
	rows := regexp.MustCompile(`(?s)<tr>.*?</tr>`).FindAllString(body, -1)
	found, affected := false, false
	for _, row := range rows {
		switch {
		case strings.Contains(row, ">14.0.3026<") || strings.Contains(row, ">14.0.3026.27<"):
			found = true
			if strings.Contains(row, "KB4088193") {
				t.Errorf("the builds page lists KB4088193 against its own fix build: %.400s", row)
			}
		case strings.Contains(row, ">13.0.4474.0<") && strings.Contains(row, "KB4088193"):
			affected = true
		}
	}
	if !found {
		t.Fatal("the builds page has no row for 14.0.3026: the test checks nothing")
	}
	if !affected {
		t.Error("13.0.4474.0 (2016 SP1 CU8, before the fix) no longer lists KB4088193")
	}
}
