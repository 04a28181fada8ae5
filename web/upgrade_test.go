package web_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web"
)

// TestReportUpgradeCase: the report of the demo's seed-003 regression
// (Billing on the 2016 SP1 CU8 reporting server, 4K disks, compressed
// backups) carries the upgrade case an engineer writes by hand: AS-IS on
// 13.0.4474.0, TO-BE on 2016 SP1 CU9 (13.0.4502.0, the first fix build
// above it in the same major version) with the speed restores on fixed
// builds measure in the fleet, the hours a year it saves and the KB to
// apply; saved as a file, the report has no link into a dashboard it is
// not served by (issue 15 item 7).
func TestReportUpgradeCase(t *testing.T) {
	db := demoDB(t)
	regs, err := db.ListRegressions(t.Context(), store.RegressionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	for _, r := range regs {
		if r.Database == "Billing" && strings.HasPrefix(r.Instance, "RPT-SQL01") {
			id = r.ID
		}
	}
	if id == 0 {
		t.Fatal("the demo has no Billing regression on RPT-SQL01")
	}
	var buf bytes.Buffer
	if err := web.RenderRegressionReport(t.Context(), db, id, &buf); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	up := html[strings.Index(html, `id="upgrade"`):strings.Index(html, `id="method"`)]
	text := strings.Join(strings.Fields(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(up, " ")), " ")
	for _, want := range []string{"AS-IS 13.0.4474.0 2016 SP1 CU8", "TO-BE 13.0.4502.0 2016 SP1 CU9", "Apply KB4100997",
		"on builds holding the fix", "13.0.5149.0 (2016 SP2 CU1)", "than their own series' usual speed", "a year of restore time"} {
		if !strings.Contains(text, want) {
			t.Errorf("the upgrade case lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(up, `href="https://support.microsoft.com/help/4100997"`) {
		t.Error("the KB to apply is not linked to Microsoft's article")
	}
	if m := regexp.MustCompile(`href="/[^"]*"`).FindString(html); m != "" {
		t.Errorf("the saved report links into the dashboard: %s", m)
	}
	if strings.Contains(html, "a link to it") {
		t.Error("the saved report promises links it does not have")
	}
	buf.Reset()
	if err := web.RenderBuildReport(t.Context(), db, "14.0.3048.4", "13.0.4474.0", &buf); err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`href="/[^"]*"`).FindString(buf.String()); m != "" {
		t.Errorf("the saved build report links into the dashboard: %s", m)
	}
}
