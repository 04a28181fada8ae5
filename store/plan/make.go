package plan

import (
	"context"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Source is what a plan reads from the warehouse; *store.DB has it.
type Source interface {
	BackupSets(ctx context.Context, instance, database string) ([]store.BackupSet, error)
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
	sets, err := src.BackupSets(ctx, r.Instance, r.Database)
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
