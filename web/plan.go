package web

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/plan"
	"github.com/restorewatch/restorewatch/web/chart"
	"github.com/restorewatch/restorewatch/web/view"
)

// The restore plan page and API (issue 18): the chain of backups that
// brings a database back to an instant, each step's expected duration and
// the T-SQL script. The warehouse answers through plan.Source, which
// *sqlite.DB has (web.Store includes it).

// planRequest reads the instant, target instance and folders of a plan
// from the query string.
func (s *Server) planRequest(c echo.Context, inst, db string) (plan.Request, error) {
	r := plan.Request{Instance: inst, Database: db, TargetInstance: c.QueryParam("to_instance"),
		DataPath: c.QueryParam("data_path"), LogPath: c.QueryParam("log_path"), DefaultRTO: s.cfg.DefaultRTO,
		Analysis: s.cfg.Analysis.Config, Calibrate: true, Now: s.cfg.Now()}
	at, err := plan.ParseAt(c.QueryParam("at"))
	if err != nil {
		return r, store.Errorf(store.EINVALID, "at=%v", err)
	}
	r.At = at
	return r, nil
}

// madePlan is a plan as plan.Make returned it, a broken chain's
// *plan.GapError included.
type madePlan struct {
	p   plan.Plan
	opt plan.ScriptOptions
	gap error
}

// makePlan makes r's plan once per data version: the people who open a
// database's plan at 02:00 open the same one, and a log-shipped database's
// plan (hundreds of steps) is too costly to make on every view
// (docs/benchmarks-log.md, "Session 11"). The plan is shared, never
// changed, by the views that read it, and never a version behind: where a
// slow aggregate's views get the previous version while the next one is
// made, a plan's wait for theirs (a plan without the newest log backup
// stops short of what can be restored).
func (s *Server) makePlan(ctx context.Context, r plan.Request) (plan.Plan, plan.ScriptOptions, error) {
	ctx = context.WithValue(ctx, freshKey{}, true)
	// The folders change the script only: one plan serves every folder
	// asked for (a new data_path per request no longer makes a new plan).
	key := strings.Join([]string{"plan", r.Instance, r.Database, r.TargetInstance, r.At.UTC().Format(time.RFC3339Nano),
		r.DefaultRTO.String()}, "\x00")
	folders := r
	r.DataPath, r.LogPath = "", ""
	if err := plan.CheckRequest(folders); err != nil {
		return plan.Plan{}, plan.ScriptOptions{}, err
	}
	client, _ := ctx.Value(planClientKey{}).(string)
	m, err := cached(ctx, s, key, func(ctx context.Context) (madePlan, error) {
		// Made, not served from the cache: charged to the client that asked.
		if client != "" && !s.plans.allow(client) {
			return madePlan{}, echo.NewHTTPError(http.StatusTooManyRequests,
				"This address asked for too many new restore plans at once; try again in a few seconds.")
		}
		p, opt, err := plan.Make(ctx, s.planRates(), r)
		var gap *plan.GapError
		if errors.As(err, &gap) {
			return madePlan{p, opt, err}, nil // a broken chain is an answer, kept as one
		}
		return madePlan{p, opt, nil}, err
	})
	if err != nil {
		return plan.Plan{}, plan.ScriptOptions{}, err
	}
	opt := m.opt
	opt.DataPath, opt.LogPath = folders.DataPath, folders.LogPath
	return m.p, opt, m.gap
}

// requestedPlan reads a plan page's address (instance, database, query)
// and makes the plan; a broken chain comes back as its *plan.GapError.
func (s *Server) requestedPlan(c echo.Context) (plan.Request, plan.Plan, plan.ScriptOptions, error) {
	inst, err := nameParam(c, "name")
	if err != nil {
		return plan.Request{}, plan.Plan{}, plan.ScriptOptions{}, err
	}
	dbName, err := nameParam(c, "db")
	if err != nil {
		return plan.Request{}, plan.Plan{}, plan.ScriptOptions{}, err
	}
	r, err := s.planRequest(c, inst, dbName)
	if err != nil {
		return r, plan.Plan{}, plan.ScriptOptions{}, err
	}
	p, opt, err := s.makePlan(withPlanClient(c), r)
	return r, p, opt, err
}

// planClientKey carries the address a plan is made for, so that makePlan
// charges the plans it makes (not those the cache serves) to it.
type planClientKey struct{}

func withPlanClient(c echo.Context) context.Context {
	return context.WithValue(c.Request().Context(), planClientKey{}, c.RealIP())
}

func (s *Server) handlePlan(c echo.Context) error {
	r, p, opt, err := s.requestedPlan(c)
	var gap *plan.GapError
	if err != nil && !errors.As(err, &gap) {
		return err
	}
	m := planModel(r, p, opt, gap)
	m.CopyJS = s.copyURL
	return s.render(c, http.StatusOK, view.PlanPage(s.page(c, "Restore plan: "+r.Database+" on "+r.Instance, "instances"), m))
}

// handlePlanSQL serves the plan's script as a .sql file to save and run
// (sqlcmd -b -i), named after the database and the instance that restores.
func (s *Server) handlePlanSQL(c echo.Context) error {
	r, p, opt, err := s.requestedPlan(c)
	var gap *plan.GapError
	if errors.As(err, &gap) {
		return store.Errorf(store.EINVALID, "%s", gap.Error())
	}
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, attachment("restore "+r.Database+" on "+p.TargetInstance+".sql"))
	return c.Blob(http.StatusOK, "application/sql; charset=utf-8", []byte(plan.Script(p, opt)))
}

// attachment is a Content-Disposition naming a download: any name, quoted
// or RFC 2231-encoded by mime.FormatMediaType, with the characters no file
// system takes (control characters, slashes, colons…) made "_".
func attachment(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(`/\:*?"<>|`, r) {
			return '_'
		}
		return r
	}, name)
	return mime.FormatMediaType("attachment", map[string]string{"filename": name})
}

// planSQLURL is the plan's .sql download, for the same instant, target and
// folders as the page.
func planSQLURL(r plan.Request) string {
	q := url.Values{}
	for k, v := range map[string]string{"to_instance": r.TargetInstance, "data_path": r.DataPath, "log_path": r.LogPath} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if !r.At.IsZero() {
		q.Set("at", r.At.UTC().Format(time.RFC3339))
	}
	u := view.DatabaseURL(r.Instance, r.Database) + "/plan.sql"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// APIPlan is GET /api/plan's answer: the plan, its script, or the break in
// the log chain that stops it.
type APIPlan struct {
	plan.Plan
	Script string      `json:"script,omitempty"`
	Gap    *APIPlanGap `json:"gap,omitempty"`
}

// APIPlanGap is a broken log chain.
type APIPlanGap struct {
	Message       string    `json:"message"`
	FromLSN       string    `json:"from_lsn"`
	ToLSN         string    `json:"to_lsn"`
	LastReachable time.Time `json:"last_reachable"`
}

func (s *Server) handleAPIPlan(c echo.Context) error {
	inst, db := c.QueryParam("instance"), c.QueryParam("database")
	if inst == "" || db == "" {
		return store.Errorf(store.EINVALID, "give instance= and database=")
	}
	r, err := s.planRequest(c, inst, db)
	if err != nil {
		return err
	}
	p, opt, err := s.makePlan(withPlanClient(c), r)
	var gap *plan.GapError
	if errors.As(err, &gap) {
		return c.JSON(http.StatusUnprocessableEntity, APIPlan{Plan: p, Gap: &APIPlanGap{Message: gap.Error(),
			FromLSN: gap.FromLSN, ToLSN: gap.ToLSN, LastReachable: gap.LastReachable}})
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, APIPlan{Plan: p, Script: plan.Script(p, opt)})
}

// planModel shapes a plan for the page.
func planModel(r plan.Request, p plan.Plan, opt plan.ScriptOptions, gap *plan.GapError) view.PlanModel {
	m := view.PlanModel{Instance: r.Instance, InstanceURL: view.InstanceURL(r.Instance), Database: r.Database,
		DatabaseURL: view.DatabaseURL(r.Instance, r.Database), Target: p.TargetInstance, Notes: p.Notes}
	for _, g := range p.Regressions {
		m.Regressions = append(m.Regressions, view.PlanRegression{Text: g.Sentence(p.Database, p.TargetInstance),
			URL: "/regressions/" + strconv.FormatInt(g.ID, 10)})
	}
	for _, c := range p.Calibration {
		m.Calibration = append(m.Calibration, c.Sentence())
	}
	if m.Target == "" {
		m.Target = r.Instance
	}
	if !r.At.IsZero() {
		m.At = r.At.Format("2006-01-02T15:04:05")
	}
	if gap != nil {
		m.Gap = gap.Error()
		m.GapURL = view.DatabaseURL(r.Instance, r.Database) + "/plan?at=" + gap.LastReachable.UTC().Format("2006-01-02T15:04:05Z")
		return m
	}
	m.Reaches = p.Reaches.UTC().Format("2006-01-02 15:04:05 UTC")
	m.Total, m.Range = plan.Duration(p.TotalS), plan.Duration(p.LowS)+" – "+plan.Duration(p.HighS)
	m.RTO, m.OverRTO = plan.Duration(p.RTO.Seconds()), p.OverRTO
	if p.Dominant != "" {
		m.Dominant = p.Dominant
		m.DominantShare = fmt.Sprintf("%.0f %%", 100*p.DominantShare)
	}
	if p.Unestimated > 0 {
		m.Unestimated = view.Int(int64(p.Unestimated))
	}
	series := map[store.Kind]int{store.KindFull: 0, store.KindDiff: 1, store.KindLog: 2}
	names := map[store.Kind]string{store.KindFull: "full backup", store.KindDiff: "differential", store.KindLog: "log backups"}
	tl := chart.Timeline{Frame: chart.Frame{Title: "Expected duration of each step, in order"}, Target: p.RTO.Seconds(), TargetLabel: "RTO target"}
	rows := make([]view.PlanStep, len(p.Steps))
	for i, st := range p.Steps {
		row := view.PlanStep{N: view.Int(int64(i + 1)), Kind: string(st.Kind), Finished: st.Set.Finish.UTC().Format("2006-01-02 15:04:05"),
			Size: view.Bytes(st.Set.Size), Devices: st.Devices, Expected: plan.Duration(st.Estimate.Seconds), Basis: st.Estimate.Basis,
			N2: view.Int(int64(st.Estimate.N)), Fleet: st.Estimate.Fleet}
		if st.Estimate.N > 0 {
			row.Range = plan.Duration(st.Estimate.LowS) + " – " + plan.Duration(st.Estimate.HighS)
		}
		if st.StopAt != nil {
			row.StopAt = st.StopAt.UTC().Format("2006-01-02 15:04:05")
		}
		if len(p.Replicas) > 1 {
			row.Replica = st.Set.Instance // where the backup's file is
		}
		rows[i] = row
		tl.Segments = append(tl.Segments, chart.Segment{Label: names[st.Kind], Seconds: st.Estimate.Seconds, Series: series[st.Kind],
			Tooltip: "Step " + row.N + ": " + string(st.Kind) + " finished " + row.Finished + " UTC, " + row.Expected})
	}
	m.Steps = rows
	for _, g := range plan.Groups(p.Steps) {
		pg := view.PlanGroup{Steps: rows[g.First : g.Last+1], Folded: g.Kind == store.KindLog && g.Len() > 1}
		if pg.Folded {
			pg.N = view.Int(int64(g.First+1)) + "–" + view.Int(int64(g.Last+1))
			pg.Label, pg.Day, pg.Size, pg.Expected = g.Label(), g.Day(), view.Bytes(g.Size), plan.Duration(g.Seconds)
		}
		m.Groups = append(m.Groups, pg)
	}
	m.SQLURL = planSQLURL(r)
	m.Timeline = tl
	m.Script = plan.Script(p, opt)
	return m
}
