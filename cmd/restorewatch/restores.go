package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/export"
	"github.com/restorewatch/restorewatch/store/human"
)

// defaultRestores is how many restores the list shows without --limit or
// --all: a screenful of the newest, with a line saying how many there are.
const defaultRestores = 50

// RestoresCmd lists restores, newest first.
type RestoresCmd struct {
	Instance string `help:"Only this instance: its name or the beginning of it, case ignored (several may match)." placeholder:"NAME"`
	Database string `help:"Only this database: its name or the beginning of it, case ignored (several may match)." placeholder:"NAME"`
	Kind     string `help:"Only this kind (full, diff, log, file, page)." enum:",full,diff,log,file,page" default:""`
	From     string `help:"Only restores from this UTC day (YYYY-MM-DD) or instant (RFC 3339) on." placeholder:"DAY"`
	To       string `help:"Only restores up to this UTC day, inclusive (YYYY-MM-DD), or before this instant (RFC 3339)." placeholder:"DAY"`
	Format   string `help:"table, json or csv." enum:"table,json,csv" default:"table"`
	Limit    int    `help:"Show the newest N (default 50)." xor:"limit" placeholder:"N"`
	All      bool   `help:"Show every restore." xor:"limit"`
	Knee     bool   `help:"Only restores whose progress slowed sharply part-way (a knee the collector saw)."`
	Wide     bool   `help:"Print every column whole, however wide the terminal."`
}

// Run implements the command.
func (c *RestoresCmd) Run(ctx context.Context, m *Main) error {
	base, err := c.filter()
	if err != nil {
		return err
	}
	db, err := m.openExisting(ctx)
	if err != nil {
		return err
	}
	namer, err := m.namer()
	if err != nil {
		return err
	}
	scopes, err := c.scopes(ctx, db)
	if err != nil {
		return err
	}
	knees, err := analysis.Knees(ctx, db, analysis.DefaultKnownIssues())
	if err != nil {
		return err
	}
	var rs []store.Restore
	total := 0
	if base.IDs = analysis.KneeRestoreIDs(knees); !c.Knee {
		base.IDs = nil
	}
	if !c.Knee || len(base.IDs) > 0 {
		if rs, total, err = listScoped(ctx, db, base, scopes); err != nil {
			return err
		}
	}
	switch c.Format {
	case "json", "csv":
		if err := writeRestores(m.Stdout, c.Format, rs, namer, knees); err != nil {
			return err
		}
		if len(rs) < total {
			fmt.Fprintln(m.Stderr, shownOf(len(rs), total))
		}
		return nil
	}
	marks := map[int64]string{}
	for _, k := range knees {
		if k.RestoreID > 0 {
			marks[k.RestoreID] = "slowed after " + human.Percent(k.Percent) + ", " + human.Times(k.Slowdown) + " slower"
		}
	}
	t := newTable("FINISHED (UTC)", "INSTANCE", "DATABASE", "KIND", "DURATION", "SOURCE", "SIZE", "LOGICAL RATE", "READ RATE",
		"BUILD", "FROM SERVER", "FROM BUILD", "DEVICE", "SLOWED")
	t.min, t.drop = map[int]int{0: 19, 4: 8}, []int{5, 11, 8, 10, 12, 6}
	for _, r := range rs {
		t.add(r.At.Format("2006-01-02 15:04:05"), printable(r.Instance), printable(r.Database), string(r.Kind),
			formatDuration(r.DurationS), r.DurationSource, formatBytes(r.BackupBytes), formatRate(r.LogicalMiBps),
			formatRate(r.ReadMiBps), namedBuild(namer, r.InstanceBuild), printable(r.SourceServer),
			namedBuild(namer, r.SourceBuild), r.DeviceKind, cmp.Or(marks[r.ID], "-"))
	}
	if err := m.printTable(t, c.Wide); err != nil {
		return err
	}
	switch {
	case total == 0 && c.Knee:
		fmt.Fprintln(m.Stdout, "(no restore the collector watched slowed sharply part-way)")
	case total == 0 && c.narrowed():
		fmt.Fprintf(m.Stdout, "(no restores %s)\n", c.describe(ctx, db, scopes))
	case total == 0:
		fmt.Fprintln(m.Stdout, "(no restores: import some with `restorewatch import`, or run `restorewatch demo`)")
	case len(rs) < total:
		fmt.Fprintln(m.Stdout, shownOf(len(rs), total))
	}
	return nil
}

func shownOf(shown, total int) string {
	return fmt.Sprintf("showing the newest %s of %s (--all for every one, --limit N for more)", group(shown), group(total))
}

func writeRestores(w io.Writer, format string, rs []store.Restore, namer func(string) string, knees []analysis.KneeFinding) error {
	rows := make([]export.RestoreRow, len(rs))
	for i := range rs {
		rows[i] = export.Row(&rs[i], namer)
	}
	export.AttachKnees(rows, knees)
	if format == "json" {
		return export.WriteJSON(w, rows)
	}
	cw, err := export.NewCSVWriter(w)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if err := cw.Write(r); err != nil {
			return err
		}
	}
	return cw.Flush()
}

// filter checks the flags that need no warehouse and returns the filter
// every scope shares: kind, dates and how many.
func (c *RestoresCmd) filter() (store.RestoreFilter, error) {
	f := store.RestoreFilter{Kind: store.Kind(c.Kind), Limit: defaultRestores}
	switch {
	case c.All:
		f.Limit = 0
	case c.Limit < 0:
		return f, usageError{fmt.Errorf("--limit %d: want a positive number (or --all)", c.Limit)}
	case c.Limit > 0:
		f.Limit = c.Limit
	}
	// A blank name would be a prefix of every name.
	if c.Instance != "" && strings.TrimSpace(store.InstanceName(c.Instance)) == "" {
		return f, usageError{fmt.Errorf("--instance %q: give a name or the beginning of one", c.Instance)}
	}
	if c.Database != "" && strings.TrimSpace(store.DatabaseName(c.Database)) == "" {
		return f, usageError{fmt.Errorf("--database %q: give a name or the beginning of one", c.Database)}
	}
	var err error
	if f.From, err = parseDay(c.From, "--from"); err != nil {
		return f, err
	}
	if f.To, err = parseDay(c.To, "--to"); err != nil {
		return f, err
	}
	if !f.To.IsZero() && len(c.To) == len(time.DateOnly) {
		f.To = f.To.AddDate(0, 0, 1) // the whole day
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		return f, usageError{fmt.Errorf("--from %s is after --to %s: give the earlier date first", c.From, c.To)}
	}
	return f, nil
}

// parseDay reads a --from or --to as every flag takes an instant
// (store.ParseTime).
func parseDay(s, flag string) (time.Time, error) {
	t, err := store.ParseTime(flag, s)
	if err != nil {
		return time.Time{}, usageError{err}
	}
	return t, nil
}

// scope is one instance and database pair to list (either may be "": any).
type scope struct{ instance, database string }

// scopes resolves --instance and --database to the exact names they match
// (matchNames), or says what exists when nothing does. No filter is one
// scope of everything.
func (c *RestoresCmd) scopes(ctx context.Context, db store.Warehouse) ([]scope, error) {
	var instances []string
	if c.Instance != "" {
		all, err := db.ListInstances(ctx, "")
		if err != nil {
			return nil, err
		}
		names := make([]string, len(all))
		for i, s := range all {
			names[i] = s.Name
		}
		if instances = human.MatchNames(store.InstanceName(c.Instance), names); instances == nil {
			return nil, store.Errorf(store.ENOTFOUND, "%s", human.NoMatch("instance", "instances", c.Instance, "", nil, names))
		}
	}
	if c.Database == "" {
		if instances == nil {
			return []scope{{}}, nil
		}
		out := make([]scope, len(instances))
		for i, n := range instances {
			out[i] = scope{instance: n}
		}
		return out, nil
	}
	f := store.SeriesFilter{}
	if len(instances) == 1 {
		f.Instance = instances[0]
	}
	series, err := db.ListSeries(ctx, f)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range series {
		if (instances == nil || slices.Contains(instances, s.Instance)) && !slices.Contains(names, s.Database) {
			names = append(names, s.Database)
		}
	}
	databases := human.MatchNames(store.DatabaseName(c.Database), names)
	if databases == nil {
		where := ""
		if instances != nil {
			where = " on " + strings.Join(printables(instances), ", ")
		}
		return nil, store.Errorf(store.ENOTFOUND, "%s", human.NoMatch("database", "databases", c.Database, where, nil, names))
	}
	if instances == nil {
		out := make([]scope, len(databases))
		for i, d := range databases {
			out[i] = scope{database: d}
		}
		return out, nil
	}
	var out []scope
	for _, s := range series {
		sc := scope{s.Instance, s.Database}
		if slices.Contains(instances, s.Instance) && slices.Contains(databases, s.Database) && !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out, nil
}

// listScoped lists the newest restores of every scope under base, merged
// newest first, cut to base.Limit, and their total count.
func listScoped(ctx context.Context, db store.Warehouse, base store.RestoreFilter, scopes []scope) ([]store.Restore, int, error) {
	var out []store.Restore
	total := 0
	for _, sc := range scopes {
		f := base
		f.Instance, f.Database = sc.instance, sc.database
		p, err := db.Restores(ctx, store.RestoreQuery{Filter: f})
		if err != nil {
			return nil, 0, err
		}
		out, total = append(out, p.Restores...), total+p.Total
	}
	if len(scopes) > 1 {
		slices.SortStableFunc(out, func(a, b store.Restore) int {
			return cmp.Or(b.At.Compare(a.At), cmp.Compare(b.ID, a.ID))
		})
		if base.Limit > 0 && len(out) > base.Limit {
			out = out[:base.Limit]
		}
	}
	return out, total, nil
}

// narrowed reports whether a filter beyond instance and database is set.
func (c *RestoresCmd) narrowed() bool {
	return c.Instance != "" || c.Database != "" || c.Kind != "" || c.From != "" || c.To != ""
}

// describe says what an empty list was asked for and, when a kind was,
// which kinds the scopes do have: "of kind page on SQLPROD01 (kinds there:
// full, log)".
func (c *RestoresCmd) describe(ctx context.Context, db store.Warehouse, scopes []scope) string {
	var parts []string
	if c.Kind != "" {
		parts = append(parts, "of kind "+c.Kind)
	}
	var insts, dbs []string
	for _, sc := range scopes {
		if sc.instance != "" && !slices.Contains(insts, sc.instance) {
			insts = append(insts, sc.instance)
		}
		if sc.database != "" && !slices.Contains(dbs, sc.database) {
			dbs = append(dbs, sc.database)
		}
	}
	if len(dbs) > 0 {
		parts = append(parts, "of "+strings.Join(printables(dbs), ", "))
	}
	if len(insts) > 0 {
		parts = append(parts, "on "+strings.Join(printables(insts), ", "))
	}
	if c.From != "" {
		parts = append(parts, "from "+c.From)
	}
	if c.To != "" {
		parts = append(parts, "to "+c.To)
	}
	msg := strings.Join(parts, " ")
	if c.Kind == "" {
		return msg
	}
	var kinds []string
	for _, sc := range scopes {
		series, err := db.ListSeries(ctx, store.SeriesFilter{Instance: sc.instance, Database: sc.database})
		if err != nil {
			return msg
		}
		for _, s := range series {
			if !slices.Contains(kinds, string(s.Kind)) {
				kinds = append(kinds, string(s.Kind))
			}
		}
	}
	slices.Sort(kinds)
	if len(kinds) == 0 {
		return msg
	}
	return msg + " (kinds there: " + strings.Join(kinds, ", ") + ")"
}

func printables(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = printable(n)
	}
	return out
}

// formatDuration is human.Duration for an optional duration.
func formatDuration(s *float64) string {
	if s == nil {
		return "unknown"
	}
	return human.Duration(*s)
}
