package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/demo"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/web"
	"github.com/restorewatch/restorewatch/web/view"
)

// countedPoints counts the reads of chart points: a database page's charts
// read a database's newest restores. Each read takes slow longer: a page
// whose data took long must still show the current version, never the
// previous one while the next is read (the cache's stale reads).
type countedPoints struct {
	web.Store
	n    *atomic.Int64
	slow time.Duration
}

func (c countedPoints) ChartPoints(ctx context.Context, f store.RestoreFilter) ([]store.ChartPoint, error) {
	c.n.Add(1)
	time.Sleep(c.slow)
	return c.Store.ChartPoints(ctx, f)
}

// A database page's charts and rows are read and drawn once per data
// version (issue 42: at 3 M restores a view drew three charts twice each,
// for a screen and a phone), and /api/instances is encoded once: views in
// between are byte for byte the same, and the first view after a change
// shows it.
func TestDatabasePageAndInstanceListOncePerDataVersion(t *testing.T) {
	ctx := context.Background()
	db := copyDemo(t)
	var n atomic.Int64
	cfg := webConfig(db)
	cfg.DB = countedPoints{Store: cfg.DB, n: &n, slow: 400 * time.Millisecond}
	_, ts := serve(t, cfg)
	cl := client(t)

	type inst struct {
		Name     string `json:"name"`
		Restores int64  `json:"restores"`
	}
	instances := func() ([]inst, string) {
		t.Helper()
		code, body, h := get(t, cl, ts.URL+"/api/instances")
		if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "application/json") || !strings.HasSuffix(body, "\n") {
			t.Fatalf("/api/instances: %d %q", code, h.Get("Content-Type"))
		}
		var list []inst
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatal(err)
		}
		return list, body
	}
	list, body := instances()
	if _, again := instances(); again != body {
		t.Fatal("/api/instances changed between two views of one data version")
	}
	// ?pretty is encoded on each request, indented: the same values.
	_, pretty, _ := get(t, cl, ts.URL+"/api/instances?pretty")
	var a, b any
	if json.Unmarshal([]byte(body), &a) != nil || json.Unmarshal([]byte(pretty), &b) != nil || !reflect.DeepEqual(a, b) || !strings.Contains(pretty, "\n  ") {
		t.Fatal("/api/instances?pretty shows other values than /api/instances")
	}
	var name string
	for _, in := range list {
		if in.Restores > 0 && !strings.ContainsAny(in.Name, "<>\\/") {
			name = in.Name
			break
		}
	}
	var newest []struct {
		ID       int64  `json:"id"`
		Database string `json:"database"`
		Kind     string `json:"kind"`
	}
	_, rbody, _ := get(t, cl, ts.URL+"/api/restores?limit=1&kind=full&instance="+url.QueryEscape(name))
	if err := json.Unmarshal([]byte(rbody), &newest); err != nil || len(newest) != 1 {
		t.Fatalf("newest restore of %s: %v %s", name, err, rbody)
	}
	page := ts.URL + view.DatabaseURL(name, newest[0].Database)
	n.Store(0)
	var first string
	for i := range 3 {
		code, body, _ := get(t, cl, page)
		if code != http.StatusOK {
			t.Fatalf("%s: %d", page, code)
		}
		if i == 0 {
			first = body
		} else if body != first {
			t.Fatalf("view %d of %s differs from the first at one data version", i+1, page)
		}
	}
	if got := n.Load(); got != 1 {
		t.Errorf("%d reads of chart points for 3 views of one database page, want 1", got)
	}
	if !strings.Contains(first, `id="db-tput-phone-title"`) || !strings.Contains(first, `id="db-size-title"`) {
		t.Fatal("the database page lacks its charts for a screen and a phone")
	}

	// A newer full restore of that database: the next view shows it.
	im, err := db.NewImport(ctx, "test", "later.csv")
	if err != nil {
		t.Fatal(err)
	}
	at := demo.DefaultNow.Add(-time.Minute)
	if err := im.History(store.HistoryRow{Instance: name, RestoreHistoryID: 990001, RestoreDate: at, Database: newest[0].Database,
		RestoreType: "D", BackupType: "D", FirstLSN: "990001000", LastLSN: "990001005",
		Origin: store.Origin{Source: "history", File: "later.csv", Line: 2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := im.CommitAndReconcile(); err != nil {
		t.Fatal(err)
	}
	if _, err := analysis.Run(ctx, db, nil, analysis.Options{Config: analysis.DefaultConfig(), Now: demo.DefaultNow}); err != nil {
		t.Fatal(err)
	}
	pg, err := db.Restores(ctx, store.RestoreQuery{Filter: store.RestoreFilter{Instance: name, Database: newest[0].Database, Limit: 1}})
	if err != nil || len(pg.Restores) != 1 {
		t.Fatalf("the new restore is not the newest of %s: %v %+v", name, err, pg.Restores)
	}
	link := fmt.Sprintf(`href="%s"`, view.RestoreURL(pg.Restores[0].ID))
	if strings.Contains(first, link) {
		t.Fatal("the page linked the new restore before it was imported")
	}
	code, body2, _ := get(t, cl, page)
	if code != http.StatusOK || !strings.Contains(body2, link) {
		t.Errorf("after a new restore the database page does not link it (%d)", code)
	}
	if got := n.Load(); got != 2 {
		t.Errorf("%d reads of chart points after a change and one more view, want 2", got)
	}
	list2, _ := instances()
	for _, in := range list2 {
		for _, was := range list {
			if in.Name == name && was.Name == name && in.Restores != was.Restores+1 {
				t.Errorf("/api/instances: %s has %d restores after one more, was %d", name, in.Restores, was.Restores)
			}
		}
	}
}

// A regression's evidence (its page and its printable report) is read and
// its charts drawn once per data version; what the clock changes (when it
// was generated) is not kept, and a change of its status shows at once.
func TestRegressionEvidenceOncePerDataVersion(t *testing.T) {
	ctx := context.Background()
	db := copyDemo(t)
	var n atomic.Int64
	var now atomic.Int64
	now.Store(demo.DefaultNow.UnixMilli())
	cfg := webConfig(db)
	cfg.DB = countedPoints{Store: cfg.DB, n: &n, slow: 400 * time.Millisecond}
	cfg.Now = func() time.Time { return time.UnixMilli(now.Load()) }
	_, ts := serve(t, cfg)
	cl := client(t)
	var regs []struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	}
	_, body, _ := get(t, cl, ts.URL+"/api/regressions?status=open")
	if err := json.Unmarshal([]byte(body), &regs); err != nil || len(regs) == 0 {
		t.Fatalf("no open regression in the demo: %v", err)
	}
	id := regs[0].ID
	page, report := ts.URL+view.RegressionURL(id), ts.URL+view.RegressionReportURL(id)
	n.Store(0)
	var views []string
	for i := range 2 {
		now.Add(time.Hour.Milliseconds())
		for _, u := range []string{page, report} {
			code, body, _ := get(t, cl, u)
			if code != http.StatusOK {
				t.Fatalf("%s: %d", u, code)
			}
			if want := "figures as of " + view.Time(cfg.Now()); u == report && !strings.Contains(body, want) {
				t.Errorf("view %d of %s does not say %q", i+1, u, want)
			}
			views = append(views, body)
		}
	}
	if got := n.Load(); got != 1 {
		t.Errorf("%d reads of chart points for 4 views of one regression, want 1", got)
	}
	if !strings.Contains(views[0], `id="reg-tput-title"`) && !strings.Contains(views[0], "rw-timescatter") {
		t.Fatal("the regression page has no chart")
	}
	if err := db.SetRegressionStatus(ctx, id, "acknowledged", "seen by the DBA team"); err != nil {
		t.Fatal(err)
	}
	if _, body, _ := get(t, cl, page); !strings.Contains(body, "seen by the DBA team") {
		t.Error("the regression page does not show its new status note")
	}
	if got := n.Load(); got != 2 {
		t.Errorf("%d reads of chart points after a status change and one view, want 2", got)
	}
}
