package web_test

import (
	"encoding/json"
	"fmt"
	"html"
	"math/big"
	"mime"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/restorewatch/restorewatch/ingest/demo"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/plan"
	"github.com/restorewatch/restorewatch/store/storetest"
	"github.com/restorewatch/restorewatch/web"
	"github.com/restorewatch/restorewatch/web/view"
)

// demoBackups is what the shared demo's backup history planted: the same
// seed and period write the same history.
func demoBackups(t *testing.T) demo.BackupTruth {
	t.Helper()
	f, err := demo.Generate(demo.Config{Seed: 1, Dir: filepath.Join(t.TempDir(), "fleet")})
	if err != nil {
		t.Fatal(err)
	}
	return f.Backups
}

func apiPlan(t *testing.T, c *http.Client, base, instance, database, at string) (int, web.APIPlan) {
	t.Helper()
	q := url.Values{"instance": {instance}, "database": {database}}
	if at != "" {
		q.Set("at", at)
	}
	code, body, _ := get(t, c, base+"/api/plan?"+q.Encode())
	var p web.APIPlan
	if code == http.StatusOK || code == http.StatusUnprocessableEntity {
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Fatalf("%s %s: %v in %.200s", instance, database, err, body)
		}
	}
	return code, p
}

// Every database of the demo fleet that is backed up has a plan to the
// latest instant with a total time, and its page links to it. The demo
// could have happened (issue 38): its databases are refreshed by a restore
// every night, so each plan begins with the full taken after the last
// restore over the database, uses no backup from before it and says where
// it begins; a log-shipped copy, always restoring, has no backups and no
// plan, in words.
func TestPlanForEveryDemoDatabase(t *testing.T) {
	db := demoDB(t)
	_, ts := serve(t, webConfig(db))
	c := client(t)
	series, err := db.ListSeries(t.Context(), store.SeriesFilter{})
	if err != nil {
		t.Fatal(err)
	}
	truth := demoBackups(t)
	seen := map[string]bool{}
	logShipped := map[string]bool{}
	for _, s := range series {
		key := s.Instance + "\x00" + s.Database
		if s.Kind == store.KindLog {
			logShipped[key] = true
		}
	}
	planned := 0
	for _, s := range series {
		key := s.Instance + "\x00" + s.Database
		if seen[key] || s.Instance == hostileInstance || s.Instance == slashInstance {
			continue
		}
		seen[key] = true
		code, p := apiPlan(t, c, ts.URL, s.Instance, s.Database, "")
		if logShipped[key] {
			if code != http.StatusNotFound {
				t.Errorf("%s %s is log-shipped (always restoring, never backed up) but its plan answers %d", s.Instance, s.Database, code)
			}
			if _, body, _ := get(t, c, ts.URL+"/api/plan?"+url.Values{"instance": {s.Instance}, "database": {s.Database}}.Encode()); !strings.Contains(body, "log shipping") {
				t.Errorf("%s %s: the missing plan does not say why: %.300s", s.Instance, s.Database, body)
			}
			continue
		}
		if code != http.StatusOK {
			t.Errorf("%s %s: status %d", s.Instance, s.Database, code)
			continue
		}
		planned++
		logs := 0
		for _, st := range p.Steps {
			if st.Kind == store.KindLog {
				logs++
			}
		}
		if len(p.Steps) < 2 || p.Steps[0].Kind != store.KindFull || logs == 0 || p.TotalS <= 0 {
			t.Errorf("%s %s: %d steps (%d logs), total %v", s.Instance, s.Database, len(p.Steps), logs, p.TotalS)
			continue
		}
		if !strings.Contains(p.Script, "WITH RECOVERY;") || strings.Count(p.Script, "RESTORE LOG ") != logs {
			t.Errorf("%s %s: script %.300s", s.Instance, s.Database, p.Script)
		}
		last, _, err := db.ListRestores(t.Context(), store.RestoreFilter{Instance: s.Instance, Database: s.Database, Kind: store.KindFull, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(last) == 1 {
			end := last[0].At
			if last[0].FinishedAt != nil {
				end = *last[0].FinishedAt
			}
			for i, st := range p.Steps {
				if st.Set.Start.Before(end) {
					t.Errorf("%s %s: step %d (%s of %s) was taken before restore %d replaced the database (ended %s)",
						s.Instance, s.Database, i+1, st.Kind, st.Set.Start, last[0].ID, end)
					break
				}
			}
			if !strings.Contains(strings.Join(p.Notes, " "), fmt.Sprintf("was restored over by restore %d,", last[0].ID)) {
				t.Errorf("%s %s: the plan does not say it begins after restore %d: %q", s.Instance, s.Database, last[0].ID, p.Notes)
			}
		}
		_, page, _ := get(t, c, ts.URL+view.DatabaseURL(s.Instance, s.Database))
		if !strings.Contains(page, `id="plan-link"`) {
			t.Errorf("%s %s: the database page does not link its plan", s.Instance, s.Database)
		}
		if code, page, _ := get(t, c, ts.URL+view.DatabaseURL(s.Instance, s.Database)+"/plan"); code != http.StatusOK ||
			!strings.Contains(page, `id="plan-script"`) {
			t.Errorf("%s %s: plan page %d", s.Instance, s.Database, code)
		}
	}
	if planned != truth.Databases || len(logShipped) == 0 {
		t.Errorf("%d databases planned, the demo backs up %d; %d log-shipped", planned, truth.Databases, len(logShipped))
	}
	// The planted broken chain: an instant inside the gap is a 422 naming
	// the missing LSN range and the last instant that can be reached.
	code, p := apiPlan(t, c, ts.URL, truth.Gap[0], truth.Gap[1], truth.GapAt.Add(30*60e9).Format("2006-01-02T15:04:05Z"))
	if code != http.StatusUnprocessableEntity || p.Gap == nil || p.Gap.FromLSN == "" || !p.Gap.LastReachable.Before(truth.GapAt) {
		t.Errorf("gap: status %d, %+v", code, p.Gap)
	}
	// Unknown database: not found, in words.
	if code, _ := apiPlan(t, c, ts.URL, truth.Gap[0], "no such database", ""); code != http.StatusNotFound {
		t.Errorf("unknown database: %d", code)
	}
	if code, _, _ := get(t, c, ts.URL+"/api/plan?instance=x&database=y&at=yesterday"); code != http.StatusBadRequest {
		t.Errorf("bad at: %d", code)
	}
}

// TestBrowserPlan follows a DBA from a database page to its plan, reads
// the script and the timeline, then asks for an instant inside the broken
// chain and is offered the last reachable one.
func TestBrowserPlan(t *testing.T) {
	db := demoDB(t)
	truth := demoBackups(t)
	b := newBrowser(t)
	_, ts := serve(t, webConfig(db))
	inst, name := truth.Fork[0], truth.Fork[1]
	b.do(t, chromedp.Navigate(ts.URL+view.DatabaseURL(inst, name)), chromedp.WaitVisible(chromedp.CSS("#plan-link")),
		chromedp.Click(chromedp.CSS("#plan-link")), chromedp.WaitVisible(chromedp.CSS("#plan-script")))
	if p := b.location(t).Path; p != view.DatabaseURL(inst, name)+"/plan" {
		t.Fatalf("the plan link led to %s", p)
	}
	script := b.text(t, "#plan-script")
	logs := strings.Count(script, "RESTORE LOG ")
	if !strings.HasPrefix(script, "-- Restore plan for database "+name) || logs < 20 || !strings.Contains(script, "WITH RECOVERY;") {
		t.Errorf("script %.400s", script)
	}
	// The day's log restores are one line, their steps folded (issue 30):
	// the page stays a few screens tall, and opens them on a click.
	if run := b.text(t, "#plan-steps tr.plan-run"); !strings.Contains(run, fmt.Sprintf("%d log restores from ", logs)) {
		t.Errorf("the log run reads %q, the script restores %d logs", run, logs)
	}
	if tall, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`document.documentElement.scrollHeight`)); err != nil || tall > 4*900 {
		t.Errorf("the plan page is %d px tall (%v), want a few screens", tall, err)
	}
	b.do(t, chromedp.Click(chromedp.CSS("#plan-logs summary")), chromedp.WaitVisible(chromedp.CSS("#plan-logs tbody tr:last-child")))
	if _, p := apiPlan(t, client(t), ts.URL, inst, name, ""); b.text(t, "#plan-logs tbody tr:last-child td:nth-child(1)") != fmt.Sprint(len(p.Steps)) {
		t.Errorf("the last folded log step is %q, want the plan's %d", b.text(t, "#plan-logs tbody tr:last-child td:nth-child(1)"), len(p.Steps))
	}
	if d := b.attr(t, "svg.rw-timeline", "role"); d != "img" {
		t.Errorf("timeline role %q", d)
	}
	b.shot(t, "plan")
	// With JavaScript the copy button shows; the .sql download is there with or without it.
	if hidden, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`document.querySelector('button[data-copy="plan-script"]').hidden`)); err != nil || hidden {
		t.Errorf("the copy button stays hidden (%v)", err)
	}
	if href := b.attr(t, "#plan-sql", "href"); href != view.DatabaseURL(inst, name)+"/plan.sql" {
		t.Errorf("download link %q", href)
	}
	gi, gdb := truth.Gap[0], truth.Gap[1]
	at := truth.GapAt.Add(30 * 60e9).Format("2006-01-02T15:04:05")
	b.do(t, chromedp.Navigate(ts.URL+view.DatabaseURL(gi, gdb)+"/plan"), chromedp.WaitVisible(chromedp.CSS("#plan-script")),
		chromedp.SetValue(chromedp.CSS(`input[name="at"]`), at), chromedp.Click(chromedp.CSS(`form.filters button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#plan-gap")))
	if txt := b.text(t, "#plan-gap"); !strings.Contains(txt, "the last instant that can be reached is") {
		t.Errorf("gap %q", txt)
	}
	b.shot(t, "plan-gap")
	b.do(t, chromedp.Click(chromedp.CSS("#plan-gap a")), chromedp.WaitVisible(chromedp.CSS("#plan-script")))
	if q := b.location(t).Query().Get("at"); q == "" {
		t.Error("the gap's link does not name an instant")
	}
}

// A plan's fleet rates come from the dashboard's cached restore orders, not
// from a scan of every restore (seconds a plan on a large warehouse): the plan the
// page serves equals the one the store's own query builds, for the
// database's own instance and for an instance without restores, whose
// every step rests on the fleet's rates.
func TestPlanFleetRatesFromTheOrders(t *testing.T) {
	db := demoDB(t)
	_, ts := serve(t, webConfig(db))
	c := client(t)
	const inst, name = "DWH-SQL02", "DW_Sales"
	for _, target := range []string{"", "NEW-SQL99"} {
		q := url.Values{"instance": {inst}, "database": {name}}
		if target != "" {
			q.Set("to_instance", target)
		}
		code, body, _ := get(t, c, ts.URL+"/api/plan?"+q.Encode())
		var got web.APIPlan
		if err := json.Unmarshal([]byte(body), &got); code != http.StatusOK || err != nil {
			t.Fatalf("to %q: %d %v %.200s", target, code, err, body)
		}
		want, _, err := plan.Make(t.Context(), db, plan.Request{Instance: inst, Database: name, TargetInstance: target,
			DefaultRTO: 4 * time.Hour, Calibrate: true})
		if err != nil {
			t.Fatal(err)
		}
		fleet := 0
		for _, st := range want.Steps {
			if st.Estimate.Fleet {
				fleet++
			}
		}
		if target != "" && fleet != len(want.Steps) {
			t.Errorf("to %q: %d of %d steps on the fleet's rates, want all", target, fleet, len(want.Steps))
		}
		g, _ := json.Marshal(got.Plan)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("to %q: the page's plan differs from the store's:\n got %.600s\nwant %.600s", target, g, w)
		}
	}
}

// An instance page lists the databases of its backup history, each linking
// its restore plan: for a demo instance every database it backs up, and for
// a production server known only by its backups (no restore, so no
// database page) the plan of a database whose name is markup, escaped.
func TestInstancePageLinksItsBackupsPlans(t *testing.T) {
	db := demoDB(t)
	ctx := t.Context()
	const prod, hostile = "PROD-ONLY01", `Sales<script>alert("x")</script>&'`
	t0 := time.Date(2026, 11, 30, 22, 0, 0, 0, time.UTC)
	if _, err := storetest.BackupSets(ctx, db, []store.BackupSet{{Instance: prod, Database: hostile,
		UUID: "0C1B0E1E-0000-4A8E-9E1B-0000000000A1", Type: "D", FirstLSN: "42000000010000001", LastLSN: "42000000010500001",
		CheckpointLSN: "42000000010000101", Start: t0, Finish: t0.Add(20 * time.Minute), Size: 10 << 30,
		Media:  []store.BackupMedia{{Family: 1, DeviceType: 2, Device: `D:\Backup\Sales.bak`}},
		Files:  []store.BackupFile{{LogicalName: "Sales", PhysicalName: `D:\Data\Sales.mdf`, Type: "D", Size: 12 << 30}},
		Origin: store.Origin{File: "backups.csv", Line: 2}}}); err != nil {
		t.Fatal(err)
	}
	_, ts := serve(t, webConfig(db))
	c := client(t)
	links := regexp.MustCompile(`<a class="plan-link" href="([^"]+)"`)

	code, page, _ := get(t, c, ts.URL+view.InstanceURL(prod))
	if code != http.StatusOK {
		t.Fatalf("%s: status %d", prod, code)
	}
	if strings.Contains(page, "<script>alert") || !strings.Contains(page, "Sales&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;&#39;") {
		t.Errorf("%s: the database's name is not escaped: %.400s", prod, page[strings.Index(page, `id="backups"`):])
	}
	m := links.FindAllStringSubmatch(page, -1)
	if len(m) != 1 {
		t.Fatalf("%s: %d plan links, want 1", prod, len(m))
	}
	if want := view.DatabaseURL(prod, hostile) + "/plan"; html.UnescapeString(m[0][1]) != want {
		t.Errorf("%s: plan link %s, want %s", prod, m[0][1], want)
	}
	if code, plan, _ := get(t, c, ts.URL+html.UnescapeString(m[0][1])); code != http.StatusOK || !strings.Contains(plan, `id="plan-script"`) {
		t.Errorf("%s: the linked plan answers %d", prod, code)
	}

	// A demo instance: a row and a plan for every database it backs up.
	series, err := db.ListSeries(ctx, store.SeriesFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var inst string
	var backed []store.DatabaseBackups
	for _, s := range series {
		if backed, err = db.InstanceBackups(ctx, s.Instance); err != nil {
			t.Fatal(err)
		}
		if inst = s.Instance; len(backed) > 1 {
			break
		}
	}
	if len(backed) < 2 {
		t.Fatalf("no demo instance backs up two databases")
	}
	_, page, _ = get(t, c, ts.URL+view.InstanceURL(inst))
	m = links.FindAllStringSubmatch(page, -1)
	if len(m) != len(backed) {
		t.Fatalf("%s: %d plan links, %d databases backed up", inst, len(m), len(backed))
	}
	for i, b := range backed {
		if want := view.DatabaseURL(inst, b.Database) + "/plan"; html.UnescapeString(m[i][1]) != want {
			t.Errorf("%s: link %d is %s, want %s", inst, i, m[i][1], want)
		}
	}
}

// A plan is made once per data version and shared by the views of that
// version: a log backup imported after a first view is in the next one.
func TestPlanFollowsNewBackups(t *testing.T) {
	db := copyDemo(t) // it adds a backup: the shared demo must stay as built (-count=N runs it again)
	_, ts := serve(t, webConfig(db))
	c := client(t)
	const inst, name = "DWH-SQL02", "DW_Sales"
	code, before := apiPlan(t, c, ts.URL, inst, name, "")
	if code != http.StatusOK || len(before.Steps) == 0 {
		t.Fatalf("status %d, %d steps", code, len(before.Steps))
	}
	if code, again := apiPlan(t, c, ts.URL, inst, name, ""); code != http.StatusOK || len(again.Steps) != len(before.Steps) {
		t.Fatalf("the same plan again: status %d, %d steps, want %d", code, len(again.Steps), len(before.Steps))
	}
	last := before.Steps[len(before.Steps)-1].Set
	if last.Type != "L" {
		t.Fatalf("the plan ends with a %s backup, want a log", last.Type)
	}
	lsn, ok := new(big.Int).SetString(last.LastLSN, 10)
	if !ok {
		t.Fatalf("last LSN %q", last.LastLSN)
	}
	next := last
	next.UUID = "0C1B0E1E-0000-4A8E-9E1B-0000000000B7"
	next.MediaSetID = 0
	next.FirstLSN, next.LastLSN = last.LastLSN, lsn.Add(lsn, big.NewInt(4200000)).String()
	next.Start, next.Finish = last.Finish.Add(15*time.Minute), last.Finish.Add(16*time.Minute)
	next.Media = []store.BackupMedia{{Family: 1, DeviceType: 2, Device: `D:\Backup\DW_Sales_next.trn`}}
	next.Files = nil
	next.Origin = store.Origin{File: "next.csv", Line: 2}
	if added, err := storetest.BackupSets(t.Context(), db, []store.BackupSet{next}); err != nil || added != 1 {
		t.Fatalf("added %d, %v", added, err)
	}
	code, after := apiPlan(t, c, ts.URL, inst, name, "")
	if code != http.StatusOK || len(after.Steps) != len(before.Steps)+1 {
		t.Fatalf("after a new log backup: status %d, %d steps, want %d", code, len(after.Steps), len(before.Steps)+1)
	}
	if got := after.Steps[len(after.Steps)-1].Set.LastLSN; got != next.LastLSN {
		t.Errorf("the plan ends at LSN %s, want the new log's %s", got, next.LastLSN)
	}
}

// The plan's script downloads as a .sql file named after the database and
// the instance, whatever characters they hold (issue 30), equal to the
// page's script; a broken chain is a clear error, not a script.
func TestPlanSQLDownload(t *testing.T) {
	db := demoDB(t)
	truth := demoBackups(t)
	_, ts := serve(t, webConfig(db))
	c := client(t)
	inst, name := truth.Fork[0], truth.Fork[1]
	code, body, h := get(t, c, ts.URL+view.DatabaseURL(inst, name)+"/plan.sql")
	if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "application/sql") {
		t.Fatalf("plan.sql: %d %q", code, h.Get("Content-Type"))
	}
	// The page's script (other tests of the shared warehouse may add a
	// log backup meanwhile, so the two are compared by their shape).
	_, p := apiPlan(t, c, ts.URL, inst, name, "")
	if !strings.HasPrefix(body, "-- Restore plan for database "+name) || !strings.Contains(body, "WITH RECOVERY;\nGO") ||
		strings.Count(body, "RESTORE LOG ") < strings.Count(p.Script, "RESTORE LOG ")-1 || len(body) < len(p.Script)*9/10 {
		t.Errorf("the download is not the plan's script (%d bytes, %d logs; the page's %d bytes)", len(body), strings.Count(body, "RESTORE LOG "), len(p.Script))
	}
	_, params, err := mime.ParseMediaType(h.Get("Content-Disposition"))
	if err != nil || params["filename"] != "restore "+strings.ReplaceAll(name, `\`, "_")+" on "+strings.ReplaceAll(inst, `\`, "_")+".sql" {
		t.Errorf("Content-Disposition %q: %v %v", h.Get("Content-Disposition"), params, err)
	}
	at := truth.GapAt.Add(30 * 60e9).Format("2006-01-02T15:04:05Z")
	if code, body, _ := get(t, c, ts.URL+view.DatabaseURL(truth.Gap[0], truth.Gap[1])+"/plan.sql?at="+at); code != http.StatusBadRequest ||
		strings.Contains(body, "RESTORE DATABASE") {
		t.Errorf("a broken chain's script: %d %.200s", code, body)
	}
}
