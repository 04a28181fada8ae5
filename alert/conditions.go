package alert

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/human"
	"github.com/restorewatch/restorewatch/store/plan"
)

// Facts is what the conditions read, and where they queue their events;
// *sqlite.DB has it all.
type Facts interface {
	plan.Source
	analysis.KneeStore
	RTOCandidates(ctx context.Context) ([]store.RTOCandidate, error)
	LatestRuns(ctx context.Context) ([]store.CollectorRun, error)
	Runs(ctx context.Context, instance string, limit int) ([]store.CollectorRun, error)
	CollectorTokens(ctx context.Context) ([]store.CollectorToken, error)
	SyncAlertConditions(ctx context.Context, kind string, found []store.AlertEvent) (int, error)
	EnqueueAlerts(ctx context.Context, es ...store.AlertEvent) error
}

// Conditions turns facts the warehouse computes on reading — the RTO
// projection, knees of restores in flight, the collector's run records,
// the push zones' last batches — into alert events. Each is computed where
// the pages compute it (plan.ProjectRTO, analysis.FindKnee), never again
// differently.
type Conditions struct {
	DB       Facts
	Analysis analysis.Options
	// DefaultRTO is the target of instances without an "rto" tag.
	DefaultRTO time.Duration
	// CollectorInterval is the collector's pass interval (the default when
	// zero); SilentPasses and FailingPasses as in Config (3 when zero).
	CollectorInterval           time.Duration
	SilentPasses, FailingPasses int
	Now                         func() time.Time
}

// Evaluate queues the events of every condition found now; a condition
// that holds on every pass is one event (SyncAlertConditions).
func (c *Conditions) Evaluate(ctx context.Context) error {
	var errs []error
	for _, f := range []struct {
		kind string
		find func(context.Context) ([]store.AlertEvent, error)
	}{
		{store.AlertRTOBreach, c.RTOBreaches},
		{store.AlertSilent, c.Silent},
		{store.AlertCollectorFailing, c.Failing},
		{store.AlertKnee, c.Knees},
	} {
		es, err := f.find(ctx)
		if err == nil {
			_, err = c.DB.SyncAlertConditions(ctx, f.kind, es)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.kind, err))
		}
	}
	return errors.Join(errs...)
}

func (c *Conditions) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// PlanURL is the address of a database's restore plan page.
func PlanURL(instance, database string) string {
	return "/instances/" + url.PathEscape(instance) + "/databases/" + url.PathEscape(database) + "/plan"
}

// RTOBreaches are the databases whose projected restore (their plan's
// total, else size over speed) is over their RTO target, or whose log chain
// is broken, as the overview lists them.
func (c *Conditions) RTOBreaches(ctx context.Context) ([]store.AlertEvent, error) {
	cs, err := c.DB.RTOCandidates(ctx)
	if err != nil {
		return nil, err
	}
	// One evaluation reads each instance's rates and the fleet's once, as
	// the overview's projection does (plan.Cached).
	rto, err := plan.ProjectRTO(ctx, &plan.Cached{Source: c.DB}, cs, c.DefaultRTO, c.Analysis.Config)
	if err != nil {
		return nil, err
	}
	var out []store.AlertEvent
	for _, p := range rto.AtRisk {
		e := store.AlertEvent{Key: fmt.Sprintf("%s/%s/%s", store.AlertRTOBreach, p.Instance, p.Database), Kind: store.AlertRTOBreach,
			Severity: store.SeverityWarning, Instance: p.Instance, Database: p.Database, Link: PlanURL(p.Instance, p.Database),
			Fields: map[string]string{"target_s": fmt.Sprint(p.Target.Seconds()), "expected_s": fmt.Sprint(p.Expected.Seconds())}}
		target := human.Duration(p.Target.Seconds())
		if p.Broken {
			e.Severity = store.SeverityCritical
			e.Title = fmt.Sprintf("%s on %s cannot be restored to its latest backup: the log chain is broken", p.Database, p.Instance)
			e.Summary = fmt.Sprintf("A log backup is missing from the chain; the RTO target is %s.", target)
			e.NextStep = "Open the restore plan: it names the missing LSN range; take a full or differential backup to start a new chain."
		} else {
			e.Ratio = p.Over()
			if e.Ratio >= 2 {
				e.Severity = store.SeverityCritical
			}
			how := "its restore plan's total"
			if !p.FromPlan {
				how = "its last full restore's size over its present speed"
			}
			e.Title = fmt.Sprintf("%s on %s would take %s to restore, over its RTO of %s", p.Database, p.Instance,
				human.Duration(p.Expected.Seconds()), target)
			e.Summary = fmt.Sprintf("%.1f× its target, from %s.", e.Ratio, how)
			e.NextStep = "Open the restore plan for the step that dominates; a faster share, a more recent full or differential, or a new target."
		}
		out = append(out, e)
	}
	return out, nil
}

// Knees are the restores in flight whose progress slowed sharply part-way
// (analysis.FindKnee, as /live and the pages show them).
func (c *Conditions) Knees(ctx context.Context) ([]store.AlertEvent, error) {
	curves, err := c.DB.InflightCurves(ctx, c.now().Add(-time.Hour))
	if err != nil {
		return nil, err
	}
	cat := c.Analysis.KnownIssues
	if cat == nil {
		cat = analysis.DefaultKnownIssues()
	}
	cf := analysis.NewCurveFacts(c.DB)
	var out []store.AlertEvent
	for _, cv := range curves {
		if cv.Ended {
			continue
		}
		if _, ok := analysis.Knee(cv.Points); !ok {
			continue
		}
		f, err := cf.Of(ctx, cv)
		if err != nil {
			return nil, err
		}
		k, ok := analysis.FindKnee(cv, f, cat)
		if !ok {
			continue
		}
		e := store.AlertEvent{Key: fmt.Sprintf("%s/%s/%s/%d", store.AlertKnee, k.Instance, k.Database, k.Started.Unix()),
			Kind: store.AlertKnee, Severity: store.SeverityWarning, Instance: k.Instance, Database: k.Database,
			Since: k.At, Ratio: k.Slowdown, Link: "/instances/" + url.PathEscape(k.Instance) + "/databases/" + url.PathEscape(k.Database) + "#progress",
			Title: fmt.Sprintf("The restore of %s on %s running since %s slowed %.0f× after %.0f %%", k.Database, k.Instance,
				k.Started.UTC().Format("15:04 UTC"), k.Slowdown, k.Percent),
			Fields: map[string]string{"percent": fmt.Sprintf("%.1f", k.Percent)}}
		if k.Bytes > 0 {
			e.Summary = fmt.Sprintf("It copied %s before the knee and %s after.", human.MiBps(k.BeforeMiBs), human.MiBps(k.AfterMiBs))
		} else {
			e.Summary = fmt.Sprintf("It copied %.2f %%/min before the knee and %.2f %%/min after.", k.BeforePctMin, k.AfterPctMin)
		}
		var steps []string
		for _, i := range k.Issues {
			steps = append(steps, "known issue "+i.ID+" ("+i.Title+")")
		}
		for _, ch := range k.Checks {
			if ch.Fits {
				steps = append(steps, "check "+strings.ToLower(ch.Name))
			}
		}
		if len(steps) == 0 {
			e.NextStep = "Look at the destination's disks and the backup share's latency now, while it runs."
		} else {
			e.NextStep = "While it runs: " + strings.Join(steps, "; ") + "."
		}
		out = append(out, e)
	}
	return out, nil
}

func (c *Conditions) passes(n int) int {
	if n <= 0 {
		return 3
	}
	return n
}

func (c *Conditions) interval() time.Duration {
	if c.CollectorInterval > 0 {
		return c.CollectorInterval
	}
	return store.DefaultCollectorInterval
}

// Silent are the instances whose newest collector pass began more than
// SilentPasses intervals ago, and the push zones (collector tokens) whose
// last batch is that old.
func (c *Conditions) Silent(ctx context.Context) ([]store.AlertEvent, error) {
	now := c.now()
	limit := time.Duration(c.passes(c.SilentPasses)) * c.interval()
	runs, err := c.DB.LatestRuns(ctx)
	if err != nil {
		return nil, err
	}
	var out []store.AlertEvent
	for _, r := range runs {
		if now.Sub(r.Started) <= limit {
			continue
		}
		out = append(out, store.AlertEvent{Key: fmt.Sprintf("%s/instance/%s", store.AlertSilent, r.Instance), Kind: store.AlertSilent,
			Severity: store.SeverityWarning, Instance: r.Instance, Since: r.Started, Link: "/collector",
			Title:    fmt.Sprintf("No collector pass over %s for %s", r.Instance, human.Duration(now.Sub(r.Started).Seconds())),
			Summary:  fmt.Sprintf("Its last pass began %s (%s); passes are due every %s.", r.Started.UTC().Format("2006-01-02 15:04 UTC"), r.Status, human.Duration(c.interval().Seconds())),
			NextStep: "Check that the collector (restorewatch collect or serve --config) runs and still lists this instance."})
	}
	toks, err := c.DB.CollectorTokens(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range toks {
		if t.Revoked != nil || t.Used == nil || now.Sub(*t.Used) <= limit {
			continue
		}
		out = append(out, store.AlertEvent{Key: fmt.Sprintf("%s/zone/%s", store.AlertSilent, t.Name), Kind: store.AlertSilent,
			Severity: store.SeverityWarning, Since: *t.Used, Link: "/collector", Fields: map[string]string{"zone": t.Name},
			Title:    fmt.Sprintf("Zone collector %s has pushed nothing for %s", t.Name, human.Duration(now.Sub(*t.Used).Seconds())),
			Summary:  fmt.Sprintf("Its last batch arrived %s.", t.Used.UTC().Format("2006-01-02 15:04 UTC")),
			NextStep: "Check the zone's collector (restorewatch collect --push) and its spool: batches wait there until this server takes them."})
	}
	return out, nil
}

// Failing are the instances whose last FailingPasses passes all failed
// (unreachable, login refused, timed out).
func (c *Conditions) Failing(ctx context.Context) ([]store.AlertEvent, error) {
	runs, err := c.DB.LatestRuns(ctx)
	if err != nil {
		return nil, err
	}
	n := c.passes(c.FailingPasses)
	var out []store.AlertEvent
	for _, r := range runs {
		if r.Status != store.RunFailed && r.Status != store.RunTimeout {
			continue
		}
		last, err := c.DB.Runs(ctx, r.Instance, n)
		if err != nil {
			return nil, err
		}
		if len(last) < n {
			continue
		}
		failing := true
		for _, x := range last {
			failing = failing && (x.Status == store.RunFailed || x.Status == store.RunTimeout)
		}
		if !failing {
			continue
		}
		var why []string
		for src, msg := range r.Errors {
			why = append(why, src+": "+msg)
		}
		since := last[len(last)-1].Started
		out = append(out, store.AlertEvent{Key: fmt.Sprintf("%s/%s", store.AlertCollectorFailing, r.Instance), Kind: store.AlertCollectorFailing,
			Severity: store.SeverityWarning, Instance: r.Instance, Since: since, Link: "/collector",
			Title:    fmt.Sprintf("The collector failed its last %d passes over %s", n, r.Instance),
			Summary:  "Last pass: " + r.Status + firstNonEmpty(strings.Join(why, "; "), ""),
			NextStep: "Check the instance is up and reachable, and the collector's login (ingest/mssql/permissions.sql)."})
	}
	return out, nil
}

func firstNonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return " — " + s
}
