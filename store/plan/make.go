package plan

import (
	"context"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Source is what a plan reads from the warehouse; *store.DB has it.
type Source interface {
	// BackupSets returns one database's fulls and differentials and the
	// log backups that finished at or after logsFrom (zero: all; NoLogs:
	// none), oldest first.
	BackupSets(ctx context.Context, instance, database string, logsFrom time.Time) ([]store.BackupSet, error)
	RestoreRates(ctx context.Context, instance string, fleet bool, perKind int) ([]store.RestoreRate, error)
	InstanceTags(ctx context.Context, instance string) (map[string]string, error)
	FileFolders(ctx context.Context, instance string) (data, log string, err error)
}

// Request is what a user asks for.
type Request struct {
	Instance, Database string
	At                 time.Time // zero = latest
	TargetInstance     string    // empty = Instance
	DataPath, LogPath  string
	DefaultRTO         time.Duration // when the target has no "rto" tag
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
	sets, err := backupSets(ctx, src, r)
	if err != nil {
		return Plan{}, opt, err
	}
	if len(sets) == 0 {
		return Plan{}, opt, store.Errorf(store.ENOTFOUND, "no backup history of %s on %s: import it with `restorewatch import backups FILE` (backup_history_export.sql) or let the collector read msdb", r.Database, r.Instance)
	}
	chain, cerr := Build(sets, sets[0].Database, r.At)
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
	p := Estimates(chain, sets[0].Instance, target, rates, RTOTarget(tags, r.DefaultRTO))
	return p, opt, cerr
}

// logMargin is how long before its base's start a log backup may finish
// and still be read: none that finished before the base started can hold
// an LSN past the base's last one, whatever the clocks said.
const logMargin = 24 * time.Hour

// backupSets reads what r's chain can use: the database's fulls and
// differentials, the base Build chooses from them, then the log backups
// from a day before that base started. A log backup that finished before
// its base started ends at an LSN the base already holds, so neither the
// chain nor its notes (forkNotes counts logs after the base) can use it; a
// log-shipped database keeps tens of thousands of them (at 10 M restores,
// reading a 90-day history of 30-minute logs was 84 % of a plan's time).
func backupSets(ctx context.Context, src Source, r Request) ([]store.BackupSet, error) {
	bases, err := src.BackupSets(ctx, r.Instance, r.Database, store.NoLogs)
	if err != nil {
		return nil, err
	}
	c, _ := Build(bases, r.Database, r.At)
	if len(c.Steps) == 0 {
		// No usable full (or logs alone): all of it, for Build to say what
		// is missing.
		return src.BackupSets(ctx, r.Instance, r.Database, time.Time{})
	}
	// The first step is the full, which finished before any differential
	// based on it started: its start bounds the base's.
	return src.BackupSets(ctx, r.Instance, r.Database, c.Steps[0].Set.Start.Add(-logMargin))
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
