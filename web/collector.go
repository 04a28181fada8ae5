package web

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web/view"
)

// collectorHistory is how many runs the page lists for one instance;
// collectorPage how many instances' latest runs it lists at once (a
// collector of ten thousand instances made one page of them all).
const (
	collectorHistory = 50
	collectorPage    = 200
)

// insecureNames is how many instances the unprotected-login banner names.
const insecureNames = 10

// handleCollector lists the last collector run of every instance, or with
// ?instance=NAME that instance's recent runs.
func (s *Server) handleCollector(c echo.Context) error {
	ctx := c.Request().Context()
	name := c.QueryParam("instance")
	var runs []store.CollectorRun
	var err error
	if name == "" {
		runs, err = s.db.LatestRuns(ctx)
	} else {
		runs, err = s.db.Runs(ctx, name, collectorHistory)
	}
	if err != nil {
		return err
	}
	m := collectorModel(runs, name, s.cfg.Now(), s.cfg.CollectorInterval, pageParam(c))
	title := "Collector"
	if name != "" {
		title = "Collector runs of " + name
	}
	return s.render(c, http.StatusOK, view.CollectorPage(s.page(c, title, "collector"), m))
}

// collectorModel shapes runs for the page; instance is "" for the fleet's
// latest runs, of which it lists one page (the counts are the fleet's).
func collectorModel(runs []store.CollectorRun, instance string, now time.Time, interval time.Duration, page int) view.Collector {
	m := view.Collector{Instance: instance, Interval: strconv.Itoa(int(interval/time.Minute)) + " min",
		Empty: instance == "" && len(runs) == 0}
	if instance != "" {
		m.InstanceURL = view.InstanceURL(instance)
	}
	from, to := 0, len(runs)
	if instance == "" {
		from = min((page-1)*collectorPage, len(runs))
		to = min(from+collectorPage, len(runs))
		m.Paging = collectorPaging(page, from, to, len(runs))
	}
	count := map[string]int64{}
	var stale int64
	var insecure []string
	for i, r := range runs {
		// Only the page's runs are shaped into rows: 10,000 of them, each
		// formatted and sorted, were most of the page's time.
		if runStale(r, now, interval) {
			stale++
		}
		if runInsecure(r) && !slices.Contains(insecure, r.Instance) {
			insecure = append(insecure, r.Instance)
		}
		count[r.Status]++
		if i >= from && i < to {
			m.Rows = append(m.Rows, runRow(r, now, interval))
		}
	}
	if len(insecure) > 0 {
		names := strings.Join(insecure[:min(len(insecure), insecureNames)], ", ")
		if len(insecure) > insecureNames {
			names += " and " + view.Int(int64(len(insecure)-insecureNames)) + " more"
		}
		m.Insecure = view.Plural(int64(len(insecure)), "instance logs", "instances log") + " in without protection (" +
			names + "): the password can be read on the network. See each run's warning."
		if instance != "" {
			m.Insecure = "Runs of this instance logged in without protection: the password can be read on the network. See each run's warning."
		}
	}
	noun := [2]string{"instance", "instances"}
	if instance != "" {
		noun = [2]string{"run", "runs"}
	}
	parts := []string{view.Plural(int64(len(runs)), noun[0], noun[1]),
		view.Int(count[store.RunOK]) + " ok",
		view.Int(count[store.RunFailed]+count[store.RunTimeout]) + " failing"}
	for _, st := range []string{store.RunPartial, store.RunRunning, store.RunCanceled} {
		if count[st] > 0 {
			parts = append(parts, view.Int(count[st])+" "+st)
		}
	}
	if stale > 0 {
		parts = append(parts, view.Int(stale)+" stale")
	}
	m.Summary = strings.Join(parts, " · ")
	return m
}

// collectorPaging is the pager of the fleet's latest runs, rows from to
// to of n.
func collectorPaging(page, from, to, n int) view.Paging {
	link := func(p int) string { return "/collector?" + url.Values{"page": {strconv.Itoa(p)}}.Encode() }
	var p view.Paging
	if to > from {
		p.Text = view.Int(int64(from+1)) + "–" + view.Int(int64(to)) + " of " + view.Plural(int64(n), "instance", "instances")
	} else if n > 0 {
		p.Text = "No instances on this page (" + view.Int(int64(n)) + " in all)"
	}
	if page > 1 {
		p.Prev = link(min(page-1, max((n+collectorPage-1)/collectorPage, 1)))
	}
	if to < n {
		p.Next = link(page + 1)
	}
	return p
}

// runEnd is when a run finished, or started while it runs.
func runEnd(r store.CollectorRun) time.Time {
	if r.Finished != nil {
		return *r.Finished
	}
	return r.Started
}

// runStale says a run is older than twice the pass interval.
func runStale(r store.CollectorRun, now time.Time, interval time.Duration) bool {
	return now.Sub(runEnd(r)) > 2*interval
}

// runInsecure says the run logged in without protection.
func runInsecure(r store.CollectorRun) bool {
	return slices.ContainsFunc(r.Notes, func(n string) bool { return strings.HasPrefix(n, store.NoteInsecureLogin) })
}

func runRow(r store.CollectorRun, now time.Time, interval time.Duration) view.RunRow {
	row := view.RunRow{Instance: r.Instance, InstanceURL: view.InstanceURL(r.Instance),
		HistoryURL: "/collector?" + url.Values{"instance": {r.Instance}}.Encode(),
		Status:     r.Status, Started: view.Time(r.Started)}
	for _, n := range r.Notes {
		if strings.HasPrefix(n, store.NoteInsecureLogin) {
			row.Warnings = append(row.Warnings, strings.TrimPrefix(n, store.NoteInsecureLogin))
		} else {
			row.Notes = append(row.Notes, n)
		}
	}
	if r.Finished != nil {
		row.Duration = view.Duration(r.Finished.Sub(r.Started).Seconds())
	} else {
		row.Duration = view.Duration(now.Sub(r.Started).Seconds()) + " so far"
	}
	row.Freshness, row.Stale = view.Ago(now.Sub(runEnd(r))), runStale(r, now, interval)
	for _, src := range slices.Sorted(maps.Keys(r.Rows)) {
		row.Rows = append(row.Rows, view.SourceCount{Source: src, Count: view.Int(r.Rows[src])})
	}
	for _, src := range slices.Sorted(maps.Keys(r.Errors)) {
		row.Errors = append(row.Errors, view.SourceError{Source: src, Text: r.Errors[src]})
	}
	return row
}
