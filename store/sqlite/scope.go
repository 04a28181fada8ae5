package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

// AuthorizePush checks that collector may write every one of instances
// and claims for it those it is the first to write, in one transaction. A
// collector may write an instance that it claimed before, or that no one
// has written yet and its token's patterns (if any) match. An instance
// another collector claimed, or that this server imported or collected
// itself, is never writable by a push. A refusal is EFORBIDDEN naming the
// instance and the reason; nothing is claimed then.
func (db *DB) AuthorizePush(ctx context.Context, collector string, instances []string) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: authorize push of %s: %w", collector, err)
	}
	defer tx.Rollback()
	// The caller has checked the token; a collector without a row here
	// (a receiver driven directly) has no patterns.
	raw := "[]"
	if err := tx.QueryRowContext(ctx, `SELECT instances FROM collector_token WHERE name = ?`, collector).Scan(&raw); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("store: authorize push of %s: %w", collector, err)
	}
	var patterns []string
	_ = json.Unmarshal([]byte(raw), &patterns)
	now := db.now().UnixMilli()
	seen := map[string]bool{}
	for _, inst := range instances {
		inst = store.InstanceName(inst)
		if inst == "" || seen[strings.ToUpper(inst)] {
			continue
		}
		seen[strings.ToUpper(inst)] = true
		var owner string
		err := tx.QueryRowContext(ctx, `SELECT collector FROM collector_instance WHERE instance = ?`, inst).Scan(&owner)
		switch {
		case err == nil && strings.EqualFold(owner, collector):
			if len(patterns) > 0 && !store.MatchesAny(patterns, inst) {
				return store.Errorf(store.EFORBIDDEN, "collector %s may not write instance %s: its token names only %s", collector, inst, strings.Join(patterns, ", "))
			}
			continue
		case err == nil:
			return notInZone(collector, inst)
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("store: authorize push of %s: %w", collector, err)
		}
		if len(patterns) > 0 && !store.MatchesAny(patterns, inst) {
			return store.Errorf(store.EFORBIDDEN, "collector %s may not write instance %s: its token names only %s", collector, inst, strings.Join(patterns, ", "))
		}
		var local int
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM instance WHERE name = ?)
			OR EXISTS (SELECT 1 FROM collector_run WHERE instance = ?)`, inst, inst).Scan(&local); err != nil {
			return fmt.Errorf("store: authorize push of %s: %w", collector, err)
		}
		if local != 0 {
			return notInZone(collector, inst)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO collector_instance (instance, collector, claimed_at) VALUES (?, ?, ?)`,
			inst, collector, now); err != nil {
			return fmt.Errorf("store: authorize push of %s: %w", collector, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: authorize push of %s: %w", collector, err)
	}
	return nil
}

// notInZone is the one refusal for an instance another zone or this server
// holds: the same words either way, so that a token's holder learns
// neither that the instance exists nor who holds it (the operator sees
// the owners in token list).
func notInZone(collector, inst string) error {
	return store.Errorf(store.EFORBIDDEN, "collector %s may not write instance %s: it is not in this collector's zone "+
		"(a collector writes only instances it wrote first and that this server does not import or collect itself)", collector, inst)
}
