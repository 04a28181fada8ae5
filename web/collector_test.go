package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/storetest"
	"github.com/restorewatch/restorewatch/web"
	"github.com/restorewatch/restorewatch/web/view"
)

// liveNow anchors the collector and live tests.
var liveNow = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// Instances of the collector tests; etlInstance needs path escaping.
const (
	rptInstance = "RPT-SQL01"
	etlInstance = `ETL\SQL02/EU`
)

// loginError is a run's error as the collector stores it: secrets already
// replaced, but text from the server that the page must escape.
const loginError = `login failed for user 'restorewatch' <script>alert(1)</script> (password=[redacted])`

// addRun records one finished (or, with finished zero, running) run.
func addRun(t *testing.T, db warehouse, instance, status string, started, finished time.Time,
	rows map[string]int64, errs map[string]string, notes []string) {
	t.Helper()
	id, err := db.StartRun(t.Context(), instance, started)
	if err != nil {
		t.Fatal(err)
	}
	if finished.IsZero() {
		return
	}
	if err := db.FinishRun(t.Context(), store.CollectorRun{ID: id, Instance: instance, Started: started, Finished: &finished,
		Status: status, Rows: rows, Errors: errs, Notes: notes}); err != nil {
		t.Fatal(err)
	}
}

func TestCollectorPage(t *testing.T) {
	db := storetest.Open(t)
	ago := func(d time.Duration) time.Time { return liveNow.Add(-d) }
	addRun(t, db, rptInstance, store.RunPartial, ago(20*time.Minute), ago(19*time.Minute),
		map[string]int64{"history": 10}, map[string]string{"errorlog": "permission denied"}, nil)
	addRun(t, db, rptInstance, store.RunOK, ago(4*time.Minute), ago(3*time.Minute),
		map[string]int64{"history": 1234, "errorlog": 56}, nil, nil)
	addRun(t, db, etlInstance, store.RunFailed, ago(2*time.Hour), ago(2*time.Hour-30*time.Second), nil,
		map[string]string{"login": loginError}, []string{"msdb rebuilt: restore_history_id went backwards"})
	addRun(t, db, "DW-SQL03", store.RunTimeout, ago(10*time.Minute), ago(9*time.Minute), nil,
		map[string]string{"history": "context deadline exceeded"}, []string{"2 archived error logs abandoned"})
	addRun(t, db, "QA-SQL04", store.RunRunning, ago(time.Minute), time.Time{}, nil, nil, nil)

	_, ts := serve(t, web.Config{DB: db, Now: func() time.Time { return liveNow }})
	c := client(t)
	code, body, _ := get(t, c, ts.URL+"/collector")
	if code != http.StatusOK {
		t.Fatalf("GET /collector = %d: %.300s", code, body)
	}
	for _, want := range []string{
		"4 instances · 1 ok · 2 failing · 1 running · 1 stale",
		`href="` + view.InstanceURL(rptInstance) + `"`,
		`href="/instances/ETL%5CSQL02%2FEU"`,
		"✓ ok", "✕ failed", "⧖ timeout", "↻ running",
		"errorlog: 56", "history: 1,234",
		"login failed for user &#39;restorewatch&#39; &lt;script&gt;alert(1)&lt;/script&gt; (password=[redacted])",
		"msdb rebuilt: restore_history_id went backwards", "2 archived error logs abandoned",
		"3 min ago", "⚠ stale</span> 1 h 59 min ago", "twice the pass interval (15 min)",
		`aria-current="page">Collector</a>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /collector: no %q", want)
		}
	}
	if strings.Contains(body, "<script>") {
		t.Error("GET /collector: an error text is not escaped")
	}
	if strings.Contains(body, "permission denied") {
		t.Error("GET /collector shows an older run than the latest")
	}

	// One instance's history, newest first.
	code, body, _ = get(t, c, ts.URL+"/collector?instance="+rptInstance)
	if code != http.StatusOK {
		t.Fatalf("GET /collector?instance= = %d: %.300s", code, body)
	}
	ok, partial := strings.Index(body, "✓ ok"), strings.Index(body, "◐ partial")
	if ok < 0 || partial < 0 || ok > partial {
		t.Errorf("GET /collector?instance=%s: want the ok run, then the partial one (at %d, %d)", rptInstance, ok, partial)
	}
	if !strings.Contains(body, "2 runs · 1 ok · 0 failing · 1 partial") || !strings.Contains(body, "permission denied") {
		t.Errorf("GET /collector?instance=%s: runs missing: %.2000s", rptInstance, body)
	}
}

// sampleSlowdown stores the progress of a restore sampled every 2.5 min:
// two samples of zeroing at 0 %, copying at 2 %/min to 55 %, then
// 0.1 %/min to 70 % (seed 000's shape), the last sample at liveNow.
func sampleSlowdown(t *testing.T, db warehouse) {
	t.Helper()
	var pcts []float64
	pcts = append(pcts, 0)
	for p := 0.0; p <= 55; p += 5 {
		pcts = append(pcts, p)
	}
	for j := 1; j <= 60; j++ {
		pcts = append(pcts, 55+0.25*float64(j))
	}
	step := 150 * time.Second
	start := liveNow.Add(-time.Duration(len(pcts)-1)*step - 30*time.Second)
	for i, p := range pcts {
		s := store.InflightSample{Instance: rptInstance, Database: "Sales16TB", SessionID: 57, Command: "RESTORE DATABASE",
			Statement: "RESTORE DATABASE Sales16TB FROM URL = '...'", Start: start, SampledAt: start.Add(30*time.Second + time.Duration(i)*step),
			Percent: p, EstRemainingMs: 5 * 3600 * 1000, WaitType: "BACKUPIO"}
		if err := db.AddInflightSamples(t.Context(), rptInstance, []store.InflightSample{s}); err != nil {
			t.Fatal(err)
		}
	}
}

// sampleFinished stores a short restore of etlInstance that ended an hour ago.
func sampleFinished(t *testing.T, db warehouse) {
	t.Helper()
	start := liveNow.Add(-90 * time.Minute)
	for i, p := range []float64{10, 40, 80, 100} {
		s := store.InflightSample{Instance: etlInstance, Database: "<b>Staging</b>", SessionID: 61, Command: "RESTORE LOG",
			Start: start, SampledAt: start.Add(time.Duration(i+1) * 5 * time.Minute), Percent: p, WaitType: "PAGEIOLATCH_SH"}
		if err := db.AddInflightSamples(t.Context(), etlInstance, []store.InflightSample{s}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.AddInflightSamples(t.Context(), etlInstance, nil); err != nil {
		t.Fatal(err)
	}
}

func TestLivePage(t *testing.T) {
	db := storetest.Open(t)
	sampleSlowdown(t, db)
	sampleFinished(t, db)
	_, ts := serve(t, web.Config{DB: db, Now: func() time.Time { return liveNow }})
	code, body, h := get(t, client(t), ts.URL+"/live")
	if code != http.StatusOK {
		t.Fatalf("GET /live = %d: %.300s", code, body)
	}
	if got := h.Get("Refresh"); got != "15" {
		t.Errorf("GET /live: Refresh header %q, want 15", got)
	}
	for _, want := range []string{
		"In flight (1)", "Finished in the last 24 h (1)",
		rptInstance, "Sales16TB", "RESTORE DATABASE", "70 %", "BACKUPIO", "3 h", "2026-03-10 17:00 UTC (in 5 h)",
		"slowed after 55 %: 2.0 → 0.1 %/min", `class="rw-knee"`,
		"&lt;b&gt;Staging&lt;/b&gt;", `href="/instances/ETL%5CSQL02%2FEU/databases/%3Cb%3EStaging%3C%2Fb%3E"`,
		"✓ finished", "PAGEIOLATCH_SH",
		`aria-current="page">Live</a>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /live: no %q", want)
		}
	}
	if strings.Contains(body, "<b>Staging") {
		t.Error("GET /live: a database name is not escaped")
	}
	// One knee, drawn for a screen and for a phone (chart.Responsive).
	if strings.Count(body, `class="rw-knee"`) != 2 {
		t.Error("GET /live: want exactly one knee in each drawing (the finished restore has none)")
	}
}

func TestCollectorAndLiveEmpty(t *testing.T) {
	_, ts := serve(t, web.Config{DB: storetest.Open(t), Now: func() time.Time { return liveNow }})
	c := client(t)
	for path, wants := range map[string][]string{
		"/collector": {"No collector has run", "<code>restorewatch collect --config FILE</code>", "<code>restorewatch serve --config FILE</code>"},
		"/live":      {"No restore has been seen in flight: no collector has run.", "This page needs the collector"},
	} {
		code, body, _ := get(t, c, ts.URL+path)
		if code != http.StatusOK {
			t.Errorf("GET %s = %d: %.300s", path, code, body)
			continue
		}
		for _, want := range wants {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s: no %q", path, want)
			}
		}
	}
}

// TestCollectorPageUsesConfiguredInterval: with a two-hour pass interval a
// run from two hours ago is fresh, and the page names that interval.
func TestCollectorPageUsesConfiguredInterval(t *testing.T) {
	db := storetest.Open(t)
	addRun(t, db, etlInstance, store.RunOK, liveNow.Add(-2*time.Hour), liveNow.Add(-2*time.Hour+time.Minute), nil, nil, nil)
	for _, c := range []struct {
		interval  time.Duration
		text      string
		wantStale bool
	}{{0, "twice the pass interval (15 min)", true}, {2 * time.Hour, "twice the pass interval (120 min)", false}} {
		_, ts := serve(t, web.Config{DB: db, Now: func() time.Time { return liveNow }, CollectorInterval: c.interval})
		code, body, _ := get(t, client(t), ts.URL+"/collector")
		if code != http.StatusOK || !strings.Contains(body, c.text) {
			t.Errorf("interval %v: %d, want %q", c.interval, code, c.text)
		}
		if stale := strings.Contains(body, "1 stale"); stale != c.wantStale {
			t.Errorf("interval %v: stale shown %v, want %v", c.interval, stale, c.wantStale)
		}
	}
}

// A run whose login was unprotected (encrypt = "false", …) carries the
// collector's warning note: the page shows it as a warning, on the run and
// above the table, never as an ordinary note.
func TestCollectorPageWarnsOfUnprotectedLogins(t *testing.T) {
	db := storetest.Open(t)
	warning := `encrypt = "false": only the login is encrypted, and only when the server offers TLS`
	addRun(t, db, rptInstance, store.RunOK, liveNow.Add(-4*time.Minute), liveNow.Add(-3*time.Minute),
		map[string]int64{"history": 3}, nil, []string{mssql.InsecureNote + warning, "history: row cap reached, the next pass continues"})
	addRun(t, db, etlInstance, store.RunOK, liveNow.Add(-4*time.Minute), liveNow.Add(-3*time.Minute), nil, nil, nil)
	_, ts := serve(t, web.Config{DB: db, Now: func() time.Time { return liveNow }})
	c := client(t)
	for _, path := range []string{"/collector", "/collector?instance=" + rptInstance} {
		code, body, _ := get(t, c, ts.URL+path)
		if code != http.StatusOK {
			t.Fatalf("GET %s = %d", path, code)
		}
		for _, want := range []string{
			`<p class="note warn" role="alert">`, "without protection",
			`<span class="badge warn">⚠ unprotected login</span> encrypt = &#34;false&#34;: only the login is encrypted`,
			"history: row cap reached, the next pass continues",
		} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s: no %q", path, want)
			}
		}
		if strings.Contains(body, mssql.InsecureNote) {
			t.Errorf("GET %s: the warning is shown as a plain note", path)
		}
	}
	_, body, _ := get(t, c, ts.URL+"/collector")
	if !strings.Contains(body, "1 instance logs in without protection (RPT-SQL01)") {
		t.Errorf("GET /collector: the summary does not name the instance: %.3000s", body)
	}
	if strings.Count(body, "⚠ unprotected login") != 2 {
		t.Errorf("GET /collector: want the banner and RPT-SQL01's run warned, not %s", etlInstance)
	}
}
