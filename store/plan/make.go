package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
)

// Source is what a plan reads from the warehouse; the SQLite warehouse has it.
type Source interface {
	// BackupSets returns one database's fulls and differentials and the
	// log backups that finished at or after logsFrom (zero: all; NoLogs:
	// none), oldest first.
	BackupSets(ctx context.Context, instance, database string, logsFrom time.Time) ([]store.BackupSet, error)
	RestoreRates(ctx context.Context, instance string, fleet bool, perKind int) ([]store.RestoreRate, error)
	InstanceTags(ctx context.Context, instance string) (map[string]string, error)
	FileFolders(ctx context.Context, instance string) (data, log string, err error)
	// ListRegressions names the regressions an estimate follows.
	ListRegressions(ctx context.Context, f store.RegressionFilter) ([]store.Regression, error)
	// BackupDatabases lists every database with a backup history as
	// "instance\x00database" keys (the instance in lower case), for
	// resolving the names a user typed.
	BackupDatabases(ctx context.Context) (map[string]bool, error)
	// BackupReplicas names the instances whose msdb recorded the
	// database's backups: one, or an availability group's replicas.
	BackupReplicas(ctx context.Context, name, database string) (store.Replicas, error)
	// ListRestores finds the restores over the database: a chain begins
	// after the last one.
	ListRestores(ctx context.Context, f store.RestoreFilter) ([]store.Restore, int, error)
	// InflightCurves finds a restore of the database in flight, which
	// informs the estimate of its full step.
	InflightCurves(ctx context.Context, since time.Time) ([]store.InflightCurve, error)
}

// Request is what a user asks for.
type Request struct {
	Instance, Database string
	At                 time.Time // zero = latest
	TargetInstance     string    // empty = Instance
	DataPath, LogPath  string
	DefaultRTO         time.Duration // when the target has no "rto" tag
	// Analysis holds the thresholds the estimates' change points are found
	// with: the configured ones, as analyze uses (zero: the defaults).
	Analysis analysis.Config
	// Calibrate replays the target's newest restores of each kind the plan
	// restores (Backtest) so the plan can say how good its ranges are; the
	// overview's RTO figures leave it out.
	Calibrate bool
	// Now is the present a restore in flight is looked for around (zero:
	// the clock's).
	Now time.Time
}

// FleetRates is how many of the fleet's most recent restores of each kind
// a plan's fallback estimates rest on.
const FleetRates = 2000

// Make reads the facts and builds the plan; the script options come with it.
// A database without backup history is ENOTFOUND; a broken chain is a
// *GapError (with the plan so far).
func Make(ctx context.Context, src Source, r Request) (Plan, ScriptOptions, error) {
	target := r.TargetInstance
	if target == "" {
		target = r.Instance
	}
	opt := ScriptOptions{DataPath: r.DataPath, LogPath: r.LogPath}
	if err := CheckRequest(r); err != nil {
		return Plan{}, opt, err
	}
	reps, sets, err := backupSets(ctx, src, r)
	if err != nil {
		return Plan{}, opt, err
	}
	if len(sets) == 0 {
		// Not as stored: as SQL Server compares names (resolve), which
		// costs a look at every database's name, so only when needed.
		typed := r
		if r, err = resolve(ctx, src, r); err != nil {
			return Plan{}, opt, err
		}
		if r != typed {
			if reps, sets, err = backupSets(ctx, src, r); err != nil {
				return Plan{}, opt, err
			}
		}
	}
	if len(sets) == 0 {
		// A copy restored only from log backups (log shipping) is always
		// restoring: it is never backed up where it is restored; its
		// primary's history is the one to plan from.
		if logs, _, err := src.ListRestores(ctx, store.RestoreFilter{Instance: r.Instance, Database: r.Database, Limit: 1}); err == nil &&
			len(logs) == 1 && logs[0].Kind == store.KindLog {
			from := "its primary"
			if logs[0].SourceServer != "" {
				from = logs[0].SourceServer
			}
			return Plan{}, opt, store.Errorf(store.ENOTFOUND, "no backup history of %s on %s: it is restored from %s's log backups (log shipping), so it is always restoring and never backed up there; plan it from %s's backup history (`restorewatch import backups FILE` of that server, or its collector)",
				r.Database, r.Instance, from, from)
		}
		return Plan{}, opt, store.Errorf(store.ENOTFOUND, "no backup history of %s on %s: import it with `restorewatch import backups FILE` (backup_history_export.sql) or let the collector read msdb", r.Database, r.Instance)
	}
	overs, err := overwrites(ctx, src, reps.Instances, sets[0].Database, sets)
	if err != nil {
		return Plan{}, opt, err
	}
	chain, cerr := BuildAfter(sets, sets[0].Database, r.At, overs)
	if r.TargetInstance == "" && !slices.ContainsFunc(reps.Instances, func(s string) bool { return strings.EqualFold(s, r.Instance) }) {
		// Named by its availability group or listener: restored where its
		// full was taken, as the replica that has its restores measured.
		target = reps.Instances[0]
		if len(chain.Steps) > 0 {
			target = chain.Steps[0].Set.Instance
		}
	}
	rates, err := src.RestoreRates(ctx, target, true, FleetRates)
	if err != nil {
		return Plan{}, opt, err
	}
	tags, err := src.InstanceTags(ctx, target)
	if err != nil {
		return Plan{}, opt, err
	}
	if opt.DataPath == "" || opt.LogPath == "" {
		if opt.DefaultData, opt.DefaultLog, err = src.FileFolders(ctx, target); err != nil {
			return Plan{}, opt, err
		}
	}
	findings, err := src.ListRegressions(ctx, store.RegressionFilter{Instance: target, Database: sets[0].Database,
		Status: "active", Direction: "any"})
	if err != nil {
		return Plan{}, opt, err
	}
	p := EstimatesOf(chain, Facts{Instance: reps.Instances[0], Target: target, Rates: rates, Findings: findings,
		RTO: RTOTarget(tags, r.DefaultRTO), Analysis: r.Analysis})
	if len(reps.Instances) > 1 {
		p.Replicas, p.Via = reps.Instances, reps.Via
		p.Notes = append([]string{"the backup history is merged from " + reps.Via + ": each step names the replica that took its backup, where its file is"}, p.Notes...)
	}
	// A plan someone reads (Calibrate) looks for the restore in flight; the
	// overview's RTO projections, one per database, do not read every
	// curve of the day for each.
	if r.Calibrate && len(p.Steps) > 0 && p.Steps[0].Kind == store.KindFull && r.At.IsZero() {
		now := r.Now
		if now.IsZero() {
			now = time.Now()
		}
		f, ferr := inFlight(ctx, src, target, r.Database, now, p.Steps[0].Estimate.Seconds)
		if ferr != nil {
			return Plan{}, opt, ferr
		}
		p.InFlight = f
		if p.InFlight != nil {
			p.Notes = append(p.Notes, p.InFlight.Sentence)
		}
	}
	if r.Calibrate {
		seen := map[store.Kind]bool{}
		for _, s := range p.Steps {
			if !seen[s.Kind] {
				seen[s.Kind] = true
				rs, path := rates, ""
				if b := s.Estimate.SetBack; b != nil {
					// The estimate's path: restores with the buffers the
					// script sets, each predicted from those before it.
					rs = nil
					for _, x := range rates {
						if uses(x, b) {
							rs = append(rs, x)
						}
					}
					path = fmt.Sprintf("with BUFFERCOUNT %d and MAXTRANSFERSIZE %d KiB, as this script sets", b.BufferCount, b.MaxTransferKiB)
				}
				if c := Backtest(rs, target, s.Kind, CalibrationRestores, r.Analysis); c.Restores > 0 {
					c.Path, c.Fleet = path, s.Estimate.Fleet
					p.Calibration = append(p.Calibration, c)
				}
			}
		}
	}
	return p, opt, cerr
}

// overwrites lists the full restores over database on the instances whose
// msdb recorded its backups, since the oldest of those backups.
func overwrites(ctx context.Context, src Source, instances []string, database string, sets []store.BackupSet) ([]Overwrite, error) {
	from := sets[0].Start
	for _, s := range sets {
		if s.Start.Before(from) {
			from = s.Start
		}
	}
	var out []Overwrite
	for _, in := range instances {
		rs, _, err := src.ListRestores(ctx, store.RestoreFilter{Instance: in, Database: database, Kind: store.KindFull, From: from.Add(-logMargin), Limit: 1000})
		if err != nil {
			return nil, err
		}
		for _, x := range rs {
			o := Overwrite{RestoreID: x.ID, Start: x.At, End: x.At}
			if x.StartedAt != nil {
				o.Start, o.End = *x.StartedAt, *x.StartedAt
			}
			if x.FinishedAt != nil && x.FinishedAt.After(o.End) {
				o.End = *x.FinishedAt
			}
			out = append(out, o)
		}
	}
	return out, nil
}

// logMargin is how long before its base's start a log backup may finish
// and still be read: none that finished before the base started can hold
// an LSN past the base's last one, whatever the clocks said.
const logMargin = 24 * time.Hour

// backupSets reads what r's chain can use, from every instance whose msdb
// recorded the database's backups (an availability group's replicas):
// the database's fulls and differentials, the base Build chooses from them,
// then the log backups from a day before that base started. A log backup
// that finished before its base started ends at an LSN the base already
// holds, so neither the chain nor its notes (forkNotes counts logs after
// the base) can use it; a log-shipped database keeps tens of thousands of
// them, and reading them all was most of such a plan's time
// (docs/benchmarks-log.md, "Session 10").
func backupSets(ctx context.Context, src Source, r Request) (store.Replicas, []store.BackupSet, error) {
	reps, err := src.BackupReplicas(ctx, r.Instance, r.Database)
	if err != nil {
		return reps, nil, err
	}
	if len(reps.Instances) == 0 {
		reps.Instances = []string{r.Instance}
	}
	candidates := reps.Candidates
	reps.Candidates = nil
	reps, all, err := readSets(ctx, src, r, reps)
	if err != nil || len(candidates) == 0 || !needsReplicas(all, reps.Database, r.At) {
		return reps, all, err
	}
	// No membership and no family GUID, and the history named cannot make
	// the chain alone (no full, or no log after its base, or a gap): only
	// LSNs can join replicas. A history that can is not held up by reading
	// every same-named database's.
	// A candidate's logs matter from a day before the known base on (as
	// for the base's own); with no base known, its fulls and differentials
	// are what a known log can continue.
	from := store.NoLogs
	if c, _ := Build(all, reps.Database, r.At); len(c.Steps) > 0 {
		from = c.Steps[0].Set.Start.Add(-logMargin)
	}
	reps.Candidates = candidates
	if reps, err = ProveByLSN(ctx, reps, all, func(ctx context.Context, in string) ([]store.BackupSet, error) {
		return src.BackupSets(ctx, in, reps.Database, from)
	}); err != nil || len(reps.Instances) == 1 {
		return reps, all, err
	}
	return readSets(ctx, src, r, reps)
}

// needsReplicas reports whether one instance's sets cannot restore the
// database on their own: no usable full, a gap, or no log after the base.
func needsReplicas(sets []store.BackupSet, database string, at time.Time) bool {
	c, err := Build(sets, database, at)
	if err != nil {
		return true
	}
	for _, s := range c.Steps {
		if s.Kind == store.KindLog {
			return false
		}
	}
	return true
}

// readSets reads what the chain can use from reps' instances (backupSets).
func readSets(ctx context.Context, src Source, r Request, reps store.Replicas) (store.Replicas, []store.BackupSet, error) {
	read := func(from time.Time) ([]store.BackupSet, error) {
		var all []store.BackupSet
		seen := map[string]bool{}
		for _, inst := range reps.Instances {
			sets, err := src.BackupSets(ctx, inst, reps.Database, from)
			if err != nil {
				return nil, err
			}
			for _, s := range sets {
				// One backup recorded twice (a merged export) counts once;
				// dbatools' raw rows are named by their msdb's own ids,
				// which two replicas share.
				key := s.UUID
				if strings.HasPrefix(key, "MSDB-BACKUP-SET-") {
					key = strings.ToLower(s.Instance) + "\x00" + key
				}
				if !seen[key] {
					seen[key] = true
					all = append(all, s)
				}
			}
		}
		if len(reps.Instances) > 1 {
			slices.SortStableFunc(all, func(a, b store.BackupSet) int { return a.Finish.Compare(b.Finish) })
		}
		return all, nil
	}
	bases, err := read(store.NoLogs)
	if err != nil {
		return reps, nil, err
	}
	c, _ := Build(bases, reps.Database, r.At)
	if len(c.Steps) == 0 {
		// No usable full (or logs alone): all of it, for Build to say what
		// is missing.
		all, err := read(time.Time{})
		return reps, all, err
	}
	// The first step is the full, which finished before any differential
	// based on it started: its start bounds the base's.
	all, err := read(c.Steps[0].Set.Start.Add(-logMargin))
	return reps, all, err
}

// DefaultRTO is the target when neither the instance's "rto" tag nor the
// configuration sets one.
const DefaultRTO = 4 * time.Hour

// RTOTarget reads an instance's "rto" tag ("4h", "90m", "1d") as the
// overview does, else def (DefaultRTO when def is zero).
func RTOTarget(tags map[string]string, def time.Duration) time.Duration {
	v := strings.TrimSpace(tags["rto"])
	if days, ok := strings.CutSuffix(v, "d"); ok {
		if d, err := time.ParseDuration(days + "h"); err == nil && d > 0 {
			return 24 * d
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d
	}
	if def > 0 {
		return def
	}
	return DefaultRTO
}

// ParseAt reads the instant a plan restores to, as the CLI's --at, the
// page's and the API's at= take it: "latest" or empty (the latest the
// backups reach, a zero time), or any instant store.ParseTime reads.
func ParseAt(s string) (time.Time, error) {
	if strings.EqualFold(strings.TrimSpace(s), "latest") {
		return time.Time{}, nil
	}
	t, err := store.ParseTime("at", s)
	if errors.Is(err, store.ErrNotTime) {
		return t, store.Errorf(store.EINVALID, "at %q is not an instant: use latest, 2026-11-03 20:00 (UTC), 2026-11-03 (its midnight, UTC) or RFC 3339 (2026-11-03T20:00:00Z)", s)
	}
	return t, err
}

// CheckFolder reports why path cannot be a data_path or log_path (the
// folder MOVE … TO puts files in): an absolute Windows path (D:\Data),
// a UNC path (\\server\share\dir) or an absolute Linux path (/var/opt/mssql/data),
// at most 248 characters (Windows' limit for a folder), without control,
// format or line-separator characters and without "$(" (a script runs
// through sqlcmd). Empty is fine: the target's default folders.
func CheckFolder(field, path string) error {
	switch {
	case path == "":
		return nil
	case len([]rune(path)) > 248:
		return store.Errorf(store.EINVALID, "%s is %d characters: a folder holds at most 248", field, len([]rune(path)))
	case !Plain(path):
		return store.Errorf(store.EINVALID, "%s holds a control or invisible character or \"$(\", which no folder a restore writes to needs and sqlcmd would act on", field)
	case len(path) >= 3 && (path[0]|0x20) >= 'a' && (path[0]|0x20) <= 'z' && path[1] == ':' && path[2] == '\\',
		strings.HasPrefix(path, `\\`) && len(path) > 2 && !strings.ContainsAny(path[2:3], `\/`),
		strings.HasPrefix(path, "/"):
	default:
		return store.Errorf(store.EINVALID, "%s must be an absolute folder: D:\\Data, \\\\server\\share\\dir or /var/opt/mssql/data", field)
	}
	if strings.ContainsAny(path, "*?\"<>|") {
		return store.Errorf(store.EINVALID, "%s holds a character no Windows or Linux folder of SQL Server's may hold (* ? \" < > |)", field)
	}
	return nil
}

// CheckRequest refuses the folders and instant no plan can have, so that
// every door (page, API, CLI) answers the same 4xx with the reason.
func CheckRequest(r Request) error {
	if err := CheckFolder("data_path", r.DataPath); err != nil {
		return err
	}
	if err := CheckFolder("log_path", r.LogPath); err != nil {
		return err
	}
	if !r.At.IsZero() {
		return store.CheckInstant("at", r.At)
	}
	return nil
}
