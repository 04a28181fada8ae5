package web

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/human"
	"github.com/restorewatch/restorewatch/store/keep"
	"github.com/restorewatch/restorewatch/web/chart"
	"github.com/restorewatch/restorewatch/web/view"
)

// instances lists every instance, cached until the data changes: on a
// fleet of thousands the per-instance counts are thousands of index reads.
func (s *Server) instances(ctx context.Context) ([]store.InstanceSummary, error) {
	return cached(ctx, s, keep.NameInstances, func(ctx context.Context) ([]store.InstanceSummary, error) {
		if body, ok := s.keptCurrent(ctx, keep.NameInstances); ok {
			// Kept by the import or analyze that made this version.
			if list, err := keep.DecodeInstances(body); err == nil {
				return list, nil
			}
		}
		return s.db.ListInstances(ctx, "")
	})
}

// instancePage is how many instances the list shows at once.
const instancePage = 200

func (s *Server) handleInstances(c echo.Context) error {
	all, err := s.instances(c.Request().Context())
	if err != nil {
		return err
	}
	q := strings.TrimSpace(c.QueryParam("q"))
	is, paging := pageInstances(all, q, pageParam(c))
	m := view.Instances{Empty: len(all) == 0, Query: q, Paging: paging}
	for _, in := range is {
		m.Rows = append(m.Rows, view.InstanceRow{Name: in.Name, URL: view.InstanceURL(in.Name), Build: orUnknown(in.Build),
			Release: s.release(in.Build), Databases: view.Int(int64(in.Databases)), Restores: view.Int(int64(in.Restores)),
			LastRestore: view.TimePtr(in.LastRestore), OpenRegressions: in.OpenRegressions,
			Semantics: semanticsShort(in.RestoreDateSemantics), Target: view.Duration(s.rtoTarget(in.Tags).Seconds())})
	}
	return s.render(c, http.StatusOK, view.InstancesPage(s.page(c, "Instances", "instances"), m))
}

// pageInstances filters the instances by name (case-insensitively) and
// cuts one page.
func pageInstances(all []store.InstanceSummary, q string, page int) ([]store.InstanceSummary, view.Paging) {
	var match []store.InstanceSummary
	for _, in := range all {
		if q == "" || strings.Contains(strings.ToLower(in.Name), strings.ToLower(q)) {
			match = append(match, in)
		}
	}
	from := min((page-1)*instancePage, len(match))
	to := min(from+instancePage, len(match))
	link := func(p int) string {
		v := url.Values{"page": {strconv.Itoa(p)}}
		if q != "" {
			v.Set("q", q)
		}
		return "/instances?" + v.Encode()
	}
	p := view.Paging{Text: fmt.Sprintf("%s–%s of %s", view.Int(int64(from+1)), view.Int(int64(to)), view.Plural(int64(len(match)), "instance", "instances"))}
	if to == from {
		p.Text = "No instance matches."
	}
	if page > 1 {
		p.Prev = link(page - 1)
	}
	if to < len(match) {
		p.Next = link(page + 1)
	}
	return match[from:to], p
}

func (s *Server) release(build string) string {
	if build == "" {
		return ""
	}
	return s.cfg.Namer(build)
}

func semanticsShort(v string) string {
	switch v {
	case "start":
		return "the start"
	case "end":
		return "the end"
	}
	return "not measured yet"
}

func (s *Server) handleInstance(c echo.Context) error {
	name, err := nameParam(c, "name")
	if err != nil {
		return err
	}
	m, err := s.instancePage(c.Request().Context(), name)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, view.InstancePage(s.page(c, name, "instances"), m))
}

// instancePage loads what an instance page shows: the instance, its host
// history, its newest restores, its series, regressions and exposure,
// cached until the data change (a log-shipping secondary's chart reads its
// newest chartLimit restores: over half of a view's cost, paid once per
// data version, not by every client opening the page), and its knees, read
// on every view like the overview's.
func (s *Server) instancePage(ctx context.Context, name string) (view.Instance, error) {
	m, err := cached(ctx, s, "instance\x00"+name, func(ctx context.Context) (view.Instance, error) {
		return s.instanceData(ctx, name)
	})
	if err != nil {
		return view.Instance{}, err
	}
	ks, err := s.knees(ctx)
	if err != nil {
		return view.Instance{}, err
	}
	m.Knees = kneeRows(kneesOf(ks, m.Name, ""))
	return m, nil
}

// instanceData is an instance page but for its knees.
func (s *Server) instanceData(ctx context.Context, name string) (view.Instance, error) {
	in, err := s.db.GetInstance(ctx, name)
	if err != nil {
		return view.Instance{}, err
	}
	hosts, err := s.db.HostHistory(ctx, name)
	if err != nil {
		return view.Instance{}, err
	}
	rs, err := s.db.ChartPoints(ctx, store.RestoreFilter{Instance: name, Limit: chartLimit})
	if err != nil {
		return view.Instance{}, err
	}
	series, err := s.db.ListSeries(ctx, store.SeriesFilter{Instance: name})
	if err != nil {
		return view.Instance{}, err
	}
	regs, err := s.activeRegressions(ctx, in.Name, "")
	if err != nil {
		return view.Instance{}, err
	}
	exp, err := cached(ctx, s, "exposures", s.db.ListExposures)
	if err != nil {
		return view.Instance{}, err
	}
	backups, err := s.db.InstanceBackups(ctx, in.Name)
	if err != nil {
		return view.Instance{}, err
	}
	m := s.instanceModel(in, hosts, rs, series, regs)
	if m.HasChart {
		m.Chart = m.Chart.Prerendered() // drawn once per data version, not per view
	}
	m.Backups = backupRows(in.Name, backups)
	m.Issues = s.instanceIssues(in, exp)
	return m, nil
}

// instanceModel shapes an instance page.
func (s *Server) instanceModel(in *store.InstanceSummary, hosts []store.HostRecord, rs []store.ChartPoint, series []store.Series, regs []store.Regression) view.Instance {
	m := view.Instance{Name: in.Name, RestoresURL: view.RestoresURL("instance", in.Name),
		Target: view.Duration(s.rtoTarget(in.Tags).Seconds())}
	m.Semantics = semanticsText(in.RestoreDateSemantics, in.SemanticsSamples)
	var markers []chart.Marker
	prev := ""
	for _, h := range hosts {
		if h.Version == "" || h.Version == prev {
			continue
		}
		prev = h.Version
		m.Builds = append(m.Builds, view.BuildChange{Since: h.ObservedLocal.Format("2006-01-02 15:04"), Version: h.Version,
			Release: s.release(h.Version), Source: h.Origin})
		markers = append(markers, chart.Marker{T: utcOf(h.ObservedLocal, h.UTCOffset), Label: h.Version})
	}
	if len(hosts) > 0 {
		m.Host = hostRows(s, hosts)
		last := hosts[len(hosts)-1]
		m.HostSource = last.Origin
	}
	m.Chart, m.HasChart = instanceChart(in.Name, rs, markers)
	for _, se := range series {
		m.Databases = append(m.Databases, s.seriesRow(se, regs))
	}
	for _, r := range byHoursLost(regs) {
		m.Regressions = append(m.Regressions, s.regressionRow(r))
	}
	return m
}

// instanceIssues lists the known issues of the instance's build: first those
// whose conditions its recent restores meet (the exposure the analysis
// recorded), then those that would apply under other conditions.
func (s *Server) instanceIssues(in *store.InstanceSummary, exp []store.Exposure) []view.IssueRef {
	var out []view.IssueRef
	seen := map[string]bool{}
	for _, e := range exp {
		if e.InstanceID == in.ID {
			seen[e.IssueID] = true
			out = append(out, view.IssueRef{ID: e.IssueID, Title: s.issue(e.IssueID).Title, Applies: true,
				Conditions: "applies: recent restores had " + lowerFirst(conditionWords(strings.Split(e.Conditions, ",")))})
		}
	}
	for _, k := range s.buildIssues(in.Build) {
		if !seen[k.ID] {
			k.Conditions = "would apply " + k.Conditions
			out = append(out, k)
		}
	}
	return out
}

// utcOf converts a snapshot's local time with its offset, when stated.
func utcOf(local time.Time, offset *int64) time.Time {
	if offset == nil {
		return local
	}
	return local.Add(-time.Duration(*offset) * time.Minute)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

func semanticsText(v string, n int) string {
	switch v {
	case "start", "end":
		return fmt.Sprintf("Measured: on this instance msdb's restore_date records the %s of a restore (%s where both msdb and the error log saw it). Durations use it accordingly.",
			map[string]string{"start": "start", "end": "end"}[v], view.Plural(int64(n), "restore", "restores"))
	}
	return fmt.Sprintf("Not measured yet (%s seen by both msdb and the error log; 3 agreeing are needed). Until then restore_date is not used as a start time.",
		view.Plural(int64(n), "restore", "restores"))
}

// hostRows lists the latest value of every host fact, so a field missing
// from the newest snapshot still shows what an older one said.
func hostRows(s *Server, hosts []store.HostRecord) []view.KV {
	var h store.HostRecord
	for _, x := range hosts {
		pick := func(dst *string, v string) {
			if v != "" {
				*dst = v
			}
		}
		pick(&h.Version, x.Version)
		pick(&h.Level, x.Level)
		pick(&h.UpdateLevel, x.UpdateLevel)
		pick(&h.Edition, x.Edition)
		pick(&h.OS, x.OS)
		pick(&h.Manufacturer, x.Manufacturer)
		pick(&h.Model, x.Model)
		for _, p := range []struct{ dst, src **int64 }{{&h.Sockets, &x.Sockets}, {&h.Cores, &x.Cores}, {&h.MemoryMB, &x.MemoryMB}} {
			if *p.src != nil {
				*p.dst = *p.src
			}
		}
		if x.IFI != nil {
			h.IFI = x.IFI
		}
		if x.Hypervisor != nil {
			h.Hypervisor = x.Hypervisor
		}
		if len(x.TraceFlags) > 0 {
			h.TraceFlags = x.TraceFlags
		}
		if len(x.Modules) > 0 {
			h.Modules = x.Modules
		}
		if len(x.Extra) > 0 {
			h.Extra = x.Extra
		}
		h.ObservedLocal, h.Origin = x.ObservedLocal, x.Origin
	}
	rows := []view.KV{
		{Key: "Build", Value: s.buildText(h.Version), Mono: true},
		{Key: "Level / update", Value: orUnknown(strings.TrimSpace(h.Level + " " + h.UpdateLevel))},
		{Key: "Edition", Value: orUnknown(h.Edition)}, {Key: "Operating system", Value: orUnknown(h.OS)},
		{Key: "Hardware", Value: orUnknown(strings.TrimSpace(h.Manufacturer + " " + h.Model))},
		{Key: "Virtual machine", Value: view.Bool(h.Hypervisor, "yes", "no")},
		{Key: "Sockets / cores", Value: view.IntPtr(h.Sockets) + " / " + view.IntPtr(h.Cores)},
		{Key: "Memory", Value: mib(h.MemoryMB)},
		{Key: "Instant file initialisation", Value: view.Bool(h.IFI, "enabled", "disabled")},
		{Key: "Startup trace flags", Value: orUnknown(joinInts(h.TraceFlags)), Mono: true},
		{Key: "Non-Microsoft modules", Value: orUnknown(strings.Join(h.Modules, ", ")), Mono: true},
	}
	// A bounded slice of what was stored (a warehouse written before the
	// limits, a hand edit): the page never grows with a blob.
	keys := slices.Sorted(maps.Keys(h.Extra))
	for i, k := range keys {
		if i == shownFacts {
			rows = append(rows, view.KV{Key: "More facts", Value: fmt.Sprintf("%d more not shown", len(keys)-shownFacts)})
			break
		}
		rows = append(rows, view.KV{Key: clipText(hostLabel(k), 128), Value: clipText(h.Extra[k], 1024)})
	}
	rows = append(rows, view.KV{Key: "Latest snapshot", Value: h.ObservedLocal.Format("2006-01-02 15:04") + " (instance local), " + h.Origin})
	return rows
}

// instanceChart plots the restores' throughput by kind (each kind thinned
// to the chart's width) with the build changes marked.
func instanceChart(name string, rs []store.ChartPoint, markers []chart.Marker) (chart.TimeScatter, bool) {
	byKind := map[store.Kind][]store.ChartPoint{}
	var kinds []store.Kind
	for i := len(rs) - 1; i >= 0; i-- { // oldest first: series appear in order of their first restore
		r := rs[i]
		if r.MiBps == nil {
			continue
		}
		if _, ok := byKind[r.Kind]; !ok {
			kinds = append(kinds, r.Kind)
		}
		byKind[r.Kind] = append(byKind[r.Kind], r)
	}
	series := make([]chart.Series, 0, len(kinds))
	for _, k := range kinds {
		pts := byKind[k]
		slices.Reverse(pts) // newest first, as thinPoints expects
		series = append(series, chart.Series{Name: string(k) + " restores",
			Points: thinPoints(pts, nil, func(p *store.ChartPoint) *float64 { return p.MiBps })})
	}
	return chart.TimeScatter{Frame: chart.Frame{Title: "Restore throughput on " + name, ID: "inst-tput", Width: wideW, Height: wideH},
		Series: series, Markers: markers, YLabel: "MiB/s", LogY: spansDecades(series...), YFromZero: true}, len(kinds) > 0
}

// seriesRow shapes a series with a link to its open regression, if any.
func (s *Server) seriesRow(se store.Series, regs []store.Regression) view.DatabaseRow {
	row := view.DatabaseRow{Database: se.Database, URL: view.DatabaseKindURL(se.Instance, se.Database, string(se.Kind)),
		Kind: string(se.Kind), N: view.Int(int64(se.N)), Baseline: view.MiBpsPtr(se.BaselineMiBps),
		Current: view.MiBpsPtr(se.CurrentMiBps), Last: view.Time(se.LastAt), Verdict: se.Verdict, Note: se.Note}
	for _, r := range regs {
		if r.Database == se.Database && r.Kind == se.Kind {
			row.RegressionURL = view.RegressionURL(r.ID)
		}
	}
	if se.Watch != nil {
		row.Watch, row.WatchURL = human.WatchLine(se.Watch), view.RestoreURL(se.Watch.RestoreID)
	}
	return row
}

// backupRows shapes an instance's backup history: a row a database, with
// the plan that restores it (the database page links its plan too, but an
// instance known only by its backups, a production server whose databases
// are restored elsewhere, has no database pages).
func backupRows(instance string, dbs []store.DatabaseBackups) []view.BackupRow {
	var out []view.BackupRow
	for _, d := range dbs {
		out = append(out, view.BackupRow{Database: d.Database, PlanURL: view.DatabaseURL(instance, d.Database) + "/plan",
			LastFull: view.Time(d.LastFull), LastDiff: view.Time(d.LastDiff), LastLog: view.Time(d.LastLog)})
	}
	return out
}

// shownFacts bounds the host facts an instance page lists.
const shownFacts = 200

// clipText is s cut to n characters, with an ellipsis when cut.
func clipText(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}
