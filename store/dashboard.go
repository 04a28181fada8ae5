package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The read queries of the dashboard. Every one runs on the read pool and is
// shaped so that a warehouse of a million restores answers from an index or
// from the small series table (one row per instance, database and kind), never
// from a scan of every restore per page view; the two that must scan (build
// cohorts, the fleet throughput trend) are cached by the web layer against
// DataVersion.

// Ping checks that the warehouse answers a query.
func (db *DB) Ping(ctx context.Context) error {
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT 1`).Scan(&n); err != nil {
		// The driver's text may name the file: it goes to the log through
		// Error(), the page shows only the coded message.
		return fmt.Errorf("%w: %v", Errorf(EUNAVAILABLE, "the warehouse does not answer"), err)
	}
	return nil
}

// DataVersion changes whenever an import, an analysis run or a status change
// could have changed what a page shows. Each part is a primary-key or
// indexed maximum, so asking costs well under a millisecond.
func (db *DB) DataVersion(ctx context.Context) (string, error) {
	var imp, ser, reg, status, inst int64
	err := db.read.QueryRowContext(ctx, `SELECT
		(SELECT COALESCE(MAX(id),0) FROM import_run), (SELECT COALESCE(MAX(id),0) FROM series),
		(SELECT COALESCE(MAX(id),0) FROM regression), (SELECT COALESCE(MAX(status_at),0) FROM regression),
		(SELECT COALESCE(MAX(id),0) FROM instance)`).Scan(&imp, &ser, &reg, &status, &inst)
	if err != nil {
		return "", fmt.Errorf("store: data version: %w", err)
	}
	return fmt.Sprintf("%d.%d.%d.%d.%d", imp, ser, reg, status, inst), nil
}

// HasTable reports whether the warehouse has a table of that name, so a page
// can tell "feature not set up" from an error.
func (db *DB) HasTable(ctx context.Context, name string) (bool, error) {
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: has table: %w", err)
	}
	return n > 0, nil
}

// Totals are the warehouse's headline counts.
type Totals struct {
	Restores, Instances, Series int64
	First, Last                 time.Time // zero when there are no restores
	LastImport                  time.Time // zero when nothing was imported
}

// Totals counts restores from the series table (its n columns sum to the
// restores analysed) and reads the time range from the restore_at index.
func (db *DB) Totals(ctx context.Context) (Totals, error) {
	var t Totals
	var first, last, imp sql.NullInt64
	err := db.read.QueryRowContext(ctx, `SELECT
		(SELECT COALESCE(SUM(n),0) FROM series), (SELECT COUNT(*) FROM instance), (SELECT COUNT(*) FROM series),
		(SELECT MIN(at_utc) FROM restore), (SELECT MAX(at_utc) FROM restore),
		(SELECT MAX(COALESCE(finished_at, started_at)) FROM import_run)`).Scan(&t.Restores, &t.Instances, &t.Series, &first, &last, &imp)
	if err != nil {
		return t, fmt.Errorf("store: totals: %w", err)
	}
	if first.Valid {
		t.First, t.Last = time.UnixMilli(first.Int64).UTC(), time.UnixMilli(last.Int64).UTC()
	}
	if imp.Valid {
		t.LastImport = time.UnixMilli(imp.Int64).UTC()
	}
	return t, nil
}

// CountRestores counts the restores that finished in [from, to).
func (db *DB) CountRestores(ctx context.Context, from, to time.Time) (int64, error) {
	var n int64
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM restore WHERE at_utc >= ? AND at_utc < ?`,
		from.UnixMilli(), to.UnixMilli()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count restores: %w", err)
	}
	return n, nil
}

// TimeValue is one measured value at one moment.
type TimeValue struct {
	At    time.Time
	Value float64
}

// Throughputs returns the logical MiB/s of the restores of one kind that
// finished in [from, to), oldest first, read from the covering index
// restore_kind_at so no restore row is touched.
func (db *DB) Throughputs(ctx context.Context, kind Kind, from, to time.Time) ([]TimeValue, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT at_utc, logical_mibps FROM restore INDEXED BY restore_kind_at
		WHERE kind = ? AND at_utc >= ? AND at_utc < ? AND logical_mibps > 0 ORDER BY kind, at_utc`,
		string(kind), from.UnixMilli(), to.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("store: throughputs: %w", err)
	}
	defer rows.Close()
	var out []TimeValue
	for rows.Next() {
		var at int64
		var v float64
		if err := rows.Scan(&at, &v); err != nil {
			return nil, fmt.Errorf("store: throughputs: %w", err)
		}
		out = append(out, TimeValue{At: time.UnixMilli(at).UTC(), Value: v})
	}
	return out, rows.Err()
}

// RTOCandidate is what a restore of one database today would read: its
// latest full, the differential after it and the logs after both, with the
// recent throughput of its full restores and the instance's tags (where an
// "rto" target may be set).
type RTOCandidate struct {
	Instance, Database  string
	Tags                map[string]string
	FullBytes           int64
	DiffBytes, LogBytes int64
	MiBps               float64 // recent median logical throughput of the full restores; 0 = unknown
	LastFull            time.Time
}

// RTOCandidates returns one row per database with a series of full
// restores. Diff and log sizes come from the series table and one index
// range per database (restore_series), so the cost follows the number of
// databases, not of restores.
func (db *DB) RTOCandidates(ctx context.Context) ([]RTOCandidate, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT i.name, i.tags, f.database_name, COALESCE(f.last_bytes,0),
		COALESCE(f.current_mibps, f.baseline_mibps, 0), COALESCE(f.last_at,0),
		COALESCE((SELECT d.last_bytes FROM series d WHERE d.instance_id = f.instance_id AND d.database_name = f.database_name
			AND d.kind = 'diff' AND d.last_at > f.last_at), 0),
		COALESCE((SELECT SUM(r.backup_bytes) FROM restore r WHERE r.instance_id = f.instance_id
			AND r.database_name = f.database_name AND r.kind = 'log' AND r.at_utc > f.last_at), 0)
		FROM series f JOIN instance i ON i.id = f.instance_id WHERE f.kind = 'full'
		ORDER BY i.name, f.database_name`)
	if err != nil {
		return nil, fmt.Errorf("store: rto candidates: %w", err)
	}
	defer rows.Close()
	var out []RTOCandidate
	for rows.Next() {
		var c RTOCandidate
		var tags string
		var last int64
		if err := rows.Scan(&c.Instance, &tags, &c.Database, &c.FullBytes, &c.MiBps, &last, &c.DiffBytes, &c.LogBytes); err != nil {
			return nil, fmt.Errorf("store: rto candidates: %w", err)
		}
		c.Tags = parseTags(tags)
		if last > 0 {
			c.LastFull = time.UnixMilli(last).UTC()
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// parseTags reads the instance's tags column, a JSON object of strings; a
// value of another type is kept as its JSON text.
func parseTags(s string) map[string]string {
	var raw map[string]json.RawMessage
	out := map[string]string{}
	if json.Unmarshal([]byte(s), &raw) != nil {
		return out
	}
	for k, v := range raw {
		var str string
		if json.Unmarshal(v, &str) == nil {
			out[k] = str
		} else {
			out[k] = string(v)
		}
	}
	return out
}

// ListExposures returns every known-issue exposure with its instance's name.
func (db *DB) ListExposures(ctx context.Context) ([]Exposure, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT e.instance_id, i.name, e.issue_id, e.build, e.conditions
		FROM exposure e JOIN instance i ON i.id = e.instance_id ORDER BY e.issue_id, e.build, i.name`)
	if err != nil {
		return nil, fmt.Errorf("store: list exposures: %w", err)
	}
	defer rows.Close()
	var out []Exposure
	for rows.Next() {
		var e Exposure
		if err := rows.Scan(&e.InstanceID, &e.Instance, &e.IssueID, &e.Build, &e.Conditions); err != nil {
			return nil, fmt.Errorf("store: list exposures: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// PageRestores returns one page of the restores matching f (Limit and
// Offset apply) and how many match, counted up to countCap (exact reports
// whether the count stopped short). Sorting by duration or throughput leaves
// out the restores whose measure is unknown, so the order can walk an index.
func (db *DB) PageRestores(ctx context.Context, f RestoreFilter, countCap int) (rs []Restore, total int, exact bool, err error) {
	where, args, err := db.pageWhere(ctx, f)
	if err != nil || where == "none" {
		return nil, 0, true, err
	}
	order, from := "r.at_utc", "restore r"
	// Without a selective filter, walk the measure's own index in order:
	// the planner (no statistics) would otherwise pick the kind index and
	// sort a million rows.
	walk := f.Instance == "" && f.Database == "" && f.Build == "" && f.Source == "" && len(f.IDs) == 0
	switch f.Sort {
	case "duration":
		order, where = "r.duration_s", where+" AND r.duration_s IS NOT NULL"
		if walk {
			from = "restore r INDEXED BY restore_duration"
		}
	case "throughput":
		order, where = "r.logical_mibps", where+" AND r.logical_mibps IS NOT NULL"
		if walk {
			from = "restore r INDEXED BY restore_throughput"
		}
	}
	cnt := `SELECT COUNT(*) FROM (SELECT 1 FROM restore r WHERE ` + where
	if countCap > 0 {
		cnt += fmt.Sprintf(" LIMIT %d", countCap+1)
	}
	if err := db.read.QueryRowContext(ctx, cnt+`)`, args...).Scan(&total); err != nil {
		return nil, 0, false, fmt.Errorf("store: count restores: %w", err)
	}
	exact = true
	if countCap > 0 && total > countCap {
		total, exact = countCap, false
	}
	dir := " DESC"
	if f.Asc {
		dir = " ASC"
	}
	// The page's ids first, from the index alone (a deep OFFSET then skips
	// index entries, not table rows), then those rows in full.
	q := `SELECT r.id FROM ` + from + ` WHERE ` + where + ` ORDER BY ` + order + dir + `, r.id` + dir
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d OFFSET %d", f.Limit, max(f.Offset, 0))
	}
	ids, err := db.ids(ctx, q, args...)
	if err != nil || len(ids) == 0 {
		return nil, total, exact, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+restoreColumns+` FROM restore r JOIN instance i ON i.id = r.instance_id
		WHERE r.id IN (`+strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+`)`, int64Args(ids)...)
	if err != nil {
		return nil, 0, false, fmt.Errorf("store: page restores: %w", err)
	}
	defer rows.Close()
	byID := make(map[int64]Restore, len(ids))
	for rows.Next() {
		r, err := scanRestore(rows)
		if err != nil {
			return nil, 0, false, fmt.Errorf("store: page restores: %w", err)
		}
		byID[r.ID] = r
	}
	for _, id := range ids {
		rs = append(rs, byID[id])
	}
	return rs, total, exact, rows.Err()
}

func (db *DB) ids(ctx context.Context, q string, args ...any) ([]int64, error) {
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: page restores: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: page restores: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// pageWhere builds the condition of PageRestores without the instance join:
// the instance's name is resolved to its id first, so the count walks the
// restore_series index, and the build prefix becomes a range on
// restore_build. It returns "none" when the named instance does not exist.
func (db *DB) pageWhere(ctx context.Context, f RestoreFilter) (string, []any, error) {
	conds := []string{"1"}
	var args []any
	if f.Instance != "" {
		var id int64
		err := db.read.QueryRowContext(ctx, `SELECT id FROM instance WHERE name = ?`, f.Instance).Scan(&id)
		if err == sql.ErrNoRows {
			return "none", nil, nil
		} else if err != nil {
			return "", nil, fmt.Errorf("store: page restores: %w", err)
		}
		conds, args = append(conds, "r.instance_id = ?"), append(args, id)
	}
	add := func(cond string, v ...any) { conds, args = append(conds, cond), append(args, v...) }
	if f.Database != "" {
		add("r.database_name = ?", f.Database)
	}
	if f.Kind != "" {
		add("r.kind = ?", string(f.Kind))
	}
	if !f.From.IsZero() {
		add("r.at_utc >= ?", f.From.UnixMilli())
	}
	if !f.To.IsZero() {
		add("r.at_utc < ?", f.To.UnixMilli())
	}
	switch {
	case strings.Count(f.Build, ".") == 3:
		// A whole version: equality keeps restore_build in time order.
		add("r.instance_build = ?", f.Build)
	case f.Build != "":
		// Every string with the prefix sorts in [prefix, prefix+U+10FFFF).
		add("r.instance_build >= ? AND r.instance_build < ?", f.Build, f.Build+"\U0010FFFF")
	}
	if f.Source != "" {
		add("r.source_server = ?", f.Source)
	}
	if len(f.IDs) > 0 {
		add("r.id IN ("+strings.TrimSuffix(strings.Repeat("?,", len(f.IDs)), ",")+")", int64Args(f.IDs)...)
	}
	return strings.Join(conds, " AND "), args, nil
}

func int64Args(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// RestoreDetail is one restore with the raw facts it was derived from, so its
// page can cite every piece of evidence.
type RestoreDetail struct {
	Restore
	// Local wall-clock readings of the instance, as its sources printed them.
	StartedLocal, FinishedLocal, RestoreDateLocal *time.Time
	History                                       *HistoryFact
	Logs                                          []LogFact // the completion line first, then client output
}

// HistoryFact is the msdb restorehistory row behind a restore.
type HistoryFact struct {
	RestoreHistoryID                               int64
	RestoreDate                                    time.Time // local
	UserName, RestoreType, BackupType              string
	SourceMachine, FirstLSN, LastLSN, KeyAlgorithm string
	BackupStart, BackupFinish                      *time.Time // local, on the source server's clock
	Source, Origin                                 string
}

// LogFact is an error-log or client-output record behind a restore.
type LogFact struct {
	Source, Origin, Statement, DeviceType string
	MessageID                             int
	Completed                             *time.Time // local
	UTCOffset                             *int64     // minutes
	Has3014                               bool
	Pages                                 *int64
	Seconds, MBps, UpperBoundS            *float64
	Buffer                                *BufferConfig
	Phases                                []Phase
	Recovery                              *RecoveryTiming
}

// GetRestoreDetail returns one restore with its evidence.
func (db *DB) GetRestoreDetail(ctx context.Context, id int64) (*RestoreDetail, error) {
	r, err := db.GetRestore(ctx, id)
	if err != nil {
		return nil, err
	}
	d := &RestoreDetail{Restore: *r}
	var started, finished, rdate, hid, lid, mid sql.NullInt64
	if err := db.read.QueryRowContext(ctx, `SELECT started_local, finished_local, restore_date_local, history_id, log_id,
		extra_log_id FROM restore WHERE id = ?`, id).Scan(&started, &finished, &rdate, &hid, &lid, &mid); err != nil {
		return nil, fmt.Errorf("store: restore detail: %w", err)
	}
	d.StartedLocal, d.FinishedLocal, d.RestoreDateLocal = nTime(started), nTime(finished), nTime(rdate)
	if hid.Valid {
		var h HistoryFact
		var at int64
		var bs, bf sql.NullInt64
		if err := db.read.QueryRowContext(ctx, `SELECT restore_history_id, restore_local, COALESCE(user_name,''),
			COALESCE(restore_type,''), COALESCE(backup_type,''), COALESCE(source_machine,''), COALESCE(first_lsn,''),
			COALESCE(last_lsn,''), COALESCE(key_algorithm,''), backup_start_local, backup_finish_local, source, origin
			FROM history_row WHERE id = ?`, hid.Int64).Scan(&h.RestoreHistoryID, &at, &h.UserName, &h.RestoreType,
			&h.BackupType, &h.SourceMachine, &h.FirstLSN, &h.LastLSN, &h.KeyAlgorithm, &bs, &bf, &h.Source, &h.Origin); err != nil {
			return nil, fmt.Errorf("store: restore detail: %w", err)
		}
		h.RestoreDate, h.BackupStart, h.BackupFinish = time.UnixMilli(at).UTC(), nTime(bs), nTime(bf)
		d.History = &h
	}
	for _, l := range []sql.NullInt64{lid, mid} {
		if !l.Valid {
			continue
		}
		f, err := db.logFact(ctx, l.Int64)
		if err != nil {
			return nil, err
		}
		d.Logs = append(d.Logs, f)
	}
	return d, nil
}

func (db *DB) logFact(ctx context.Context, id int64) (LogFact, error) {
	var f LogFact
	var completed, off, pages sql.NullInt64
	var secs, mbps, upper sql.NullFloat64
	var buffer, phases, recovery sql.NullString
	err := db.read.QueryRowContext(ctx, `SELECT source, origin, COALESCE(statement,''), COALESCE(device_type,''), message_id,
		completed_local, utc_offset, has_3014, pages, seconds, mbps, upper_bound_s, buffer, phases, recovery
		FROM log_restore WHERE id = ?`, id).Scan(&f.Source, &f.Origin, &f.Statement, &f.DeviceType, &f.MessageID,
		&completed, &off, &f.Has3014, &pages, &secs, &mbps, &upper, &buffer, &phases, &recovery)
	if err != nil {
		return f, fmt.Errorf("store: restore detail: %w", err)
	}
	f.Completed, f.UTCOffset, f.Pages = nTime(completed), nInt(off), nInt(pages)
	f.Seconds, f.MBps, f.UpperBoundS = nFloat(secs), nFloat(mbps), nFloat(upper)
	if buffer.Valid {
		f.Buffer = &BufferConfig{}
		_ = json.Unmarshal([]byte(buffer.String), f.Buffer)
	}
	if phases.Valid {
		_ = json.Unmarshal([]byte(phases.String), &f.Phases)
	}
	if recovery.Valid {
		f.Recovery = &RecoveryTiming{}
		_ = json.Unmarshal([]byte(recovery.String), f.Recovery)
	}
	return f, nil
}

// InstanceSummary is one instance as the instance list shows it.
type InstanceSummary struct {
	ID                   int64             `json:"-"`
	Name                 string            `json:"name"`
	Build                string            `json:"build"` // latest known; "" when no source stated one
	Tags                 map[string]string `json:"tags"`
	RestoreDateSemantics string            `json:"restore_date_semantics"`
	SemanticsSamples     int               `json:"semantics_samples"`
	Databases            int               `json:"databases"`
	Restores             int               `json:"restores"`
	Regressed            int               `json:"regressed_series"`
	OpenRegressions      int               `json:"open_regressions"`
	LastRestore          *time.Time        `json:"last_restore"`
}

// ListInstances returns every instance (or the one named) with counts from
// the series and regression tables and its latest stated build (restores
// take their instance build from the same host snapshots, so there is no
// other source to fall back on).
func (db *DB) ListInstances(ctx context.Context, name string) ([]InstanceSummary, error) {
	q := `SELECT i.id, i.name, i.tags, i.restore_date_semantics, i.semantics_samples,
		COALESCE((SELECT h.version FROM host_snapshot h WHERE h.instance_id = i.id AND h.version IS NOT NULL
			ORDER BY h.observed_local DESC LIMIT 1), ''),
		(SELECT COUNT(DISTINCT s.database_name) FROM series s WHERE s.instance_id = i.id),
		(SELECT COALESCE(SUM(s.n),0) FROM series s WHERE s.instance_id = i.id),
		(SELECT COUNT(*) FROM series s WHERE s.instance_id = i.id AND s.verdict = 'regression'),
		(SELECT COUNT(*) FROM regression g WHERE g.instance_id = i.id AND g.status = 'open' AND g.direction = 'regression'),
		(SELECT MAX(s.last_at) FROM series s WHERE s.instance_id = i.id)
		FROM instance i`
	var args []any
	if name != "" {
		q, args = q+` WHERE i.name = ?`, append(args, name)
	}
	rows, err := db.read.QueryContext(ctx, q+` ORDER BY i.name`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list instances: %w", err)
	}
	defer rows.Close()
	var out []InstanceSummary
	for rows.Next() {
		var s InstanceSummary
		var tags string
		var last sql.NullInt64
		if err := rows.Scan(&s.ID, &s.Name, &tags, &s.RestoreDateSemantics, &s.SemanticsSamples, &s.Build, &s.Databases,
			&s.Restores, &s.Regressed, &s.OpenRegressions, &last); err != nil {
			return nil, fmt.Errorf("store: list instances: %w", err)
		}
		s.Tags, s.LastRestore = parseTags(tags), nTime(last)
		out = append(out, s)
	}
	return out, rows.Err()
}

// GetInstance returns one instance, or a not_found error.
func (db *DB) GetInstance(ctx context.Context, name string) (*InstanceSummary, error) {
	is, err := db.ListInstances(ctx, name)
	if err != nil {
		return nil, err
	}
	if len(is) == 0 {
		return nil, Errorf(ENOTFOUND, "instance %q not found", name)
	}
	return &is[0], nil
}

// HostRecord is one stored host snapshot: what one source said about the
// instance's engine and host at one moment.
type HostRecord struct {
	ObservedLocal                          time.Time
	UTCOffset                              *int64
	Source, Origin                         string
	Version, Level, UpdateLevel, UpdateRef string
	Edition, OS, Manufacturer, Model       string
	Hypervisor, IFI                        *bool
	Sockets, Cores, MemoryMB               *int64
	TraceFlags                             []int
	Modules                                []string
	Extra                                  map[string]string
}

// HostHistory returns an instance's host snapshots, oldest first.
func (db *DB) HostHistory(ctx context.Context, instance string) ([]HostRecord, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT h.observed_local, h.utc_offset, h.source, h.origin, COALESCE(h.version,''),
		COALESCE(h.level,''), COALESCE(h.update_level,''), COALESCE(h.update_ref,''), COALESCE(h.edition,''),
		COALESCE(h.os,''), COALESCE(h.manufacturer,''), COALESCE(h.model,''), h.hypervisor, h.ifi, h.sockets, h.cores,
		h.memory_mb, h.trace_flags, h.modules, h.extra
		FROM host_snapshot h JOIN instance i ON i.id = h.instance_id WHERE i.name = ? ORDER BY h.observed_local, h.id`, instance)
	if err != nil {
		return nil, fmt.Errorf("store: host history: %w", err)
	}
	defer rows.Close()
	var out []HostRecord
	for rows.Next() {
		var h HostRecord
		var at int64
		var off, sockets, cores, mem sql.NullInt64
		var hyp, ifi sql.NullBool
		var flags, mods, extra string
		if err := rows.Scan(&at, &off, &h.Source, &h.Origin, &h.Version, &h.Level, &h.UpdateLevel, &h.UpdateRef, &h.Edition,
			&h.OS, &h.Manufacturer, &h.Model, &hyp, &ifi, &sockets, &cores, &mem, &flags, &mods, &extra); err != nil {
			return nil, fmt.Errorf("store: host history: %w", err)
		}
		h.ObservedLocal, h.UTCOffset = time.UnixMilli(at).UTC(), nInt(off)
		h.Hypervisor, h.IFI = nBool(hyp), nBool(ifi)
		h.Sockets, h.Cores, h.MemoryMB = nInt(sockets), nInt(cores), nInt(mem)
		_ = json.Unmarshal([]byte(flags), &h.TraceFlags)
		_ = json.Unmarshal([]byte(mods), &h.Modules)
		_ = json.Unmarshal([]byte(extra), &h.Extra)
		out = append(out, h)
	}
	return out, rows.Err()
}

// RelativeSpeed is one restore's throughput and its speed relative to the
// baseline of its own series (Rel 0 when the series has no baseline).
type RelativeSpeed struct {
	At                         time.Time
	InstanceBuild, SourceBuild string
	MiBps, Rel                 float64
	DurationS                  float64 // 0 = unknown
}

// RelativeSpeeds returns the measured restores matching f (newest first,
// at most f.Limit when set) with their speed relative to their series'
// baseline. With an empty filter it reads every measured restore once,
// which is what the fleet-wide build cohorts need; callers cache it.
func (db *DB) RelativeSpeeds(ctx context.Context, f RestoreFilter) ([]RelativeSpeed, error) {
	where, args, err := db.pageWhere(ctx, f)
	if err != nil || where == "none" {
		return nil, err
	}
	// The whole fleet is read fastest straight from the table (a tenth of
	// the time of a million index look-ups); a filter uses its own index,
	// never the throughput one ("+" keeps that term off every index).
	from := "restore r"
	if where == "1" {
		from = "restore r NOT INDEXED"
	}
	q := `SELECT r.at_utc, COALESCE(r.instance_build,''), COALESCE(r.source_build,''), r.logical_mibps,
		COALESCE(r.logical_mibps / s.baseline_mibps, 0), COALESCE(r.duration_s, 0)
		FROM ` + from + ` LEFT JOIN series s ON s.instance_id = r.instance_id AND s.database_name = r.database_name
		AND s.kind = r.kind WHERE ` + where + ` AND +r.logical_mibps > 0`
	if f.Limit > 0 {
		q += fmt.Sprintf(" ORDER BY r.at_utc DESC LIMIT %d", f.Limit)
	}
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: relative speeds: %w", err)
	}
	defer rows.Close()
	var out []RelativeSpeed
	for rows.Next() {
		var s RelativeSpeed
		var at int64
		if err := rows.Scan(&at, &s.InstanceBuild, &s.SourceBuild, &s.MiBps, &s.Rel, &s.DurationS); err != nil {
			return nil, fmt.Errorf("store: relative speeds: %w", err)
		}
		s.At = time.UnixMilli(at).UTC()
		out = append(out, s)
	}
	return out, rows.Err()
}

// ChartPoint is the lean view of a restore that a chart draws.
type ChartPoint struct {
	ID               int64
	At               time.Time
	Database         string
	Kind             Kind
	MiBps, DurationS *float64
}

// ChartPoints returns the restores matching f, newest first, at most
// f.Limit, with only the columns a chart needs.
func (db *DB) ChartPoints(ctx context.Context, f RestoreFilter) ([]ChartPoint, error) {
	where, args, err := db.pageWhere(ctx, f)
	if err != nil || where == "none" {
		return nil, err
	}
	q := `SELECT r.id, r.at_utc, r.database_name, r.kind, r.logical_mibps, r.duration_s FROM restore r WHERE ` + where +
		` ORDER BY r.at_utc DESC, r.id DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: chart points: %w", err)
	}
	defer rows.Close()
	var out []ChartPoint
	for rows.Next() {
		var p ChartPoint
		var at int64
		var kind string
		var mb, dur sql.NullFloat64
		if err := rows.Scan(&p.ID, &at, &p.Database, &kind, &mb, &dur); err != nil {
			return nil, fmt.Errorf("store: chart points: %w", err)
		}
		p.At, p.Kind, p.MiBps, p.DurationS = time.UnixMilli(at).UTC(), Kind(kind), nFloat(mb), nFloat(dur)
		out = append(out, p)
	}
	return out, rows.Err()
}
