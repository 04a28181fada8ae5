package postgres

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
)

// tokenPrefix marks collector tokens, as on SQLite (a token made on one
// engine is the same kind of string as one made on the other).
const tokenPrefix = "rwc_"

func tokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// CreateCollectorToken makes a random token for the collector name and
// keeps only its hash; a name whose token is valid is a conflict, a revoked
// one is replaced. instances are the names or patterns the token may write.
func (db *DB) CreateCollectorToken(ctx context.Context, name string, instances ...string) (string, error) {
	if err := store.ValidCollectorName(name); err != nil {
		return "", err
	}
	pats := store.InstancePatterns(instances)
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("store: create token: %w", err)
	}
	token := tokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	tag, err := db.pool.Exec(ctx, `INSERT INTO collector_token (name, hash, created_at, instances) VALUES ($1, $2, $3, $4)
		ON CONFLICT (name) DO UPDATE SET hash = excluded.hash, created_at = excluded.created_at, revoked_at = NULL, used_at = NULL,
			instances = excluded.instances, ags = '[]'
		WHERE collector_token.revoked_at IS NOT NULL`, name, tokenHash(token), db.now().UnixMilli(), jsonText(pats))
	if err != nil {
		return "", fmt.Errorf("store: create token for %s: %w", name, err)
	}
	if tag.RowsAffected() == 0 {
		return "", store.Errorf(store.ECONFLICT, "collector %s already has a valid token: revoke it first (restorewatch token revoke %s)", name, name)
	}
	return token, nil
}

// RevokeCollectorToken revokes the token of the collector name.
func (db *DB) RevokeCollectorToken(ctx context.Context, name string) error {
	tag, err := db.pool.Exec(ctx, `UPDATE collector_token SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL`,
		db.now().UnixMilli(), name)
	if err != nil {
		return fmt.Errorf("store: revoke token of %s: %w", name, err)
	}
	if tag.RowsAffected() == 0 {
		return store.Errorf(store.ENOTFOUND, "no valid token for collector %s (restorewatch token list shows them)", name)
	}
	return nil
}

// CollectorTokens lists the collectors' tokens by name, revoked ones too.
func (db *DB) CollectorTokens(ctx context.Context) ([]store.CollectorToken, error) {
	rows, err := db.pool.Query(ctx, `SELECT t.name::text, t.created_at, t.revoked_at, t.used_at, t.instances,
			COALESCE((SELECT json_agg(c.instance::text ORDER BY c.instance) FROM collector_instance AS c
				WHERE c.collector = t.name)::text, '[]'), t.ags
		FROM collector_token AS t ORDER BY t.name`)
	if err != nil {
		return nil, fmt.Errorf("store: list tokens: %w", err)
	}
	out, err := collect(rows, func(row pgx.CollectableRow) (store.CollectorToken, error) {
		var t store.CollectorToken
		var created int64
		var revoked, used *int64
		var pats, claimed, ags string
		if err := row.Scan(&t.Name, &created, &revoked, &used, &pats, &claimed, &ags); err != nil {
			return t, err
		}
		_ = json.Unmarshal([]byte(pats), &t.Instances)
		_ = json.Unmarshal([]byte(claimed), &t.Claimed)
		_ = json.Unmarshal([]byte(ags), &t.AGs)
		t.Created, t.Revoked, t.Used = store.UnixMs(created), msTime(revoked), msTime(used)
		return t, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: list tokens: %w", err)
	}
	return out, nil
}

// CollectorForToken returns the name of the collector whose valid token
// token is; an unknown or revoked token is ENOTFOUND, one message for both.
func (db *DB) CollectorForToken(ctx context.Context, token string) (string, error) {
	refused := store.Errorf(store.ENOTFOUND, "unknown or revoked collector token")
	if len(token) != len(tokenPrefix)+43 {
		return "", refused
	}
	want := tokenHash(token)
	var name, hash string
	var revoked *int64
	err := db.pool.QueryRow(ctx, `SELECT name::text, hash, revoked_at FROM collector_token WHERE hash = $1`, want).
		Scan(&name, &hash, &revoked)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", refused
	case err != nil:
		return "", fmt.Errorf("store: check collector token: %w", err)
	case revoked != nil || subtle.ConstantTimeCompare([]byte(hash), []byte(want)) != 1:
		return "", refused
	}
	return name, nil
}

// SetCollectorAGs records the availability groups whose replicas in the
// collector's zone a plan may merge with other zones'.
func (db *DB) SetCollectorAGs(ctx context.Context, name string, ags []string) error {
	clean := []string{}
	for _, a := range ags {
		if a = store.InstanceName(a); a != "" && !slices.ContainsFunc(clean, func(c string) bool { return strings.EqualFold(c, a) }) {
			clean = append(clean, a)
		}
	}
	tag, err := db.pool.Exec(ctx, `UPDATE collector_token SET ags = $1 WHERE name = $2`, jsonText(clean), name)
	if err != nil {
		return fmt.Errorf("store: set AGs of %s: %w", name, err)
	}
	if tag.RowsAffected() == 0 {
		return store.Errorf(store.ENOTFOUND, "no token for collector %s (restorewatch token list shows them)", name)
	}
	return nil
}

// PushApplied reports whether the batch of collector was applied already.
func (db *DB) PushApplied(ctx context.Context, collector, batch string) (bool, error) {
	var ok bool
	err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM push_batch WHERE collector = $1 AND batch = $2)`, collector, batch).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("store: push batch %s/%s: %w", collector, batch, err)
	}
	return ok, nil
}

// keepPushBatches is how long applied batch ids are remembered.
const keepPushBatches = 30 * 24 * time.Hour

// RecordPush remembers that collector's batch was applied, stores its
// collector runs, notes the token's use and forgets old batch ids, in one
// transaction (a batch of run records only; a batch of records is marked
// by its import, Import.MarkPush). Two replicas applying the same batch at
// once serialise on the batch's row: the second finds it marked and stores
// nothing.
func (db *DB) RecordPush(ctx context.Context, collector, batch string, records, added int64, runs ...store.CollectorRun) error {
	if err := checkRuns(runs); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		_, err := db.recordPush(ctx, tx, collector, batch, records, added, runs)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: record push %s/%s: %w", collector, batch, err)
	}
	return nil
}

// checkRuns validates a push's run records before anything is written.
func checkRuns(runs []store.CollectorRun) error {
	for _, r := range runs {
		if err := r.Validate(); err != nil {
			return err
		}
		if err := store.CheckInstantPtr("finished", r.Finished); err != nil {
			return store.Errorf(store.EINVALID, "run record: %s", store.ErrorMessage(err))
		}
	}
	return nil
}

// recordPush marks collector's batch applied inside tx, with its runs;
// marked false says another apply marked it first (tx then stores nothing).
func (db *DB) recordPush(ctx context.Context, tx pgx.Tx, collector, batch string, records, added int64, runs []store.CollectorRun) (marked bool, err error) {
	if err := checkRuns(runs); err != nil {
		return false, err
	}
	now := db.now()
	tag, err := tx.Exec(ctx, `INSERT INTO push_batch (collector, batch, applied_at, records, added) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT DO NOTHING`, collector, batch, now.UnixMilli(), records, added)
	if err != nil || tag.RowsAffected() == 0 {
		return false, err // or another apply of the same batch marked it first
	}
	for _, r := range runs {
		finished := now
		if r.Finished != nil {
			finished = *r.Finished
		}
		inst := store.InstanceName(r.Instance)
		if _, err := tx.Exec(ctx, `INSERT INTO collector_run (instance, started, finished, status, rows, errors, notes)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, inst, r.Started.UnixMilli(), finished.UnixMilli(), r.Status,
			jsonText(nonNilCounts(r.Rows)), jsonText(nonNilMap(r.Errors)), jsonText(nonNil(r.Notes))); err != nil {
			return false, fmt.Errorf("run of %s: %w", r.Instance, err)
		}
		if err := pruneRuns(ctx, tx, inst); err != nil {
			return false, fmt.Errorf("prune runs: %w", err)
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE collector_token SET used_at = $1 WHERE name = $2`, now.UnixMilli(), collector); err != nil {
		return false, err
	}
	_, err = tx.Exec(ctx, `DELETE FROM push_batch WHERE applied_at < $1`, now.Add(-keepPushBatches).UnixMilli())
	return err == nil, err
}

// AuthorizePush checks that collector may write every one of instances and
// claims for it those it is the first to write, in one transaction (the
// rules of store/sqlite's AuthorizePush).
func (db *DB) AuthorizePush(ctx context.Context, collector string, instances []string) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		raw := "[]"
		if err := tx.QueryRow(ctx, `SELECT instances FROM collector_token WHERE name = $1`, collector).Scan(&raw); err != nil && !errors.Is(err, pgx.ErrNoRows) {
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
			outside := func() error {
				return store.Errorf(store.EFORBIDDEN, "collector %s may not write instance %s: its token names only %s", collector, inst, strings.Join(patterns, ", "))
			}
			var owner string
			err := tx.QueryRow(ctx, `SELECT collector::text FROM collector_instance WHERE instance = $1`, inst).Scan(&owner)
			switch {
			case err == nil && strings.EqualFold(owner, collector):
				if len(patterns) > 0 && !store.MatchesAny(patterns, inst) {
					return outside()
				}
				continue
			case err == nil:
				return notInZone(collector, inst)
			case !errors.Is(err, pgx.ErrNoRows):
				return fmt.Errorf("store: authorize push of %s: %w", collector, err)
			}
			if len(patterns) > 0 && !store.MatchesAny(patterns, inst) {
				return outside()
			}
			var local bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM instance WHERE name = $1)
				OR EXISTS (SELECT 1 FROM collector_run WHERE instance = $1)`, inst).Scan(&local); err != nil {
				return fmt.Errorf("store: authorize push of %s: %w", collector, err)
			}
			if local {
				return notInZone(collector, inst)
			}
			// Another replica may be claiming it for another collector at
			// this moment: the primary key lets one claim win, and the
			// other collector is refused as if it had come second.
			tag, err := tx.Exec(ctx, `INSERT INTO collector_instance (instance, collector, claimed_at) VALUES ($1, $2, $3)
				ON CONFLICT (instance) DO NOTHING`, inst, collector, now)
			if err != nil {
				return fmt.Errorf("store: authorize push of %s: %w", collector, err)
			}
			if tag.RowsAffected() == 0 {
				if err := tx.QueryRow(ctx, `SELECT collector::text FROM collector_instance WHERE instance = $1`, inst).Scan(&owner); err != nil {
					return fmt.Errorf("store: authorize push of %s: %w", collector, err)
				}
				if !strings.EqualFold(owner, collector) {
					return notInZone(collector, inst)
				}
			}
		}
		return nil
	})
}

// notInZone is the one refusal for an instance another zone or this server
// holds, in store/sqlite's words.
func notInZone(collector, inst string) error {
	return store.Errorf(store.EFORBIDDEN, "collector %s may not write instance %s: it is not in this collector's zone "+
		"(a collector writes only instances it wrote first and that this server does not import or collect itself)", collector, inst)
}
