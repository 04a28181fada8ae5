package sqlite

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// tokenPrefix marks collector tokens, so that secret scanners and people
// recognise one pasted where it should not be.
const tokenPrefix = "rwc_"

func tokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// CreateCollectorToken makes a random token for the collector name and
// keeps only its hash; the token is returned once and cannot be read back.
// A name whose token is valid is a conflict (revoke it first); a revoked
// one is replaced.
//
// instances are the names or patterns (path.Match, case-insensitive:
// "SQL-B-*") of the instances the token may write; none means any instance
// that is not yet in the warehouse. Either way a collector writes only the
// instances it wrote first (see AuthorizePush).
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
	res, err := db.write.ExecContext(ctx, `INSERT INTO collector_token (name, hash, created_at, instances) VALUES (?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET hash = excluded.hash, created_at = excluded.created_at, revoked_at = NULL, used_at = NULL,
			instances = excluded.instances, ags = '[]'
		WHERE collector_token.revoked_at IS NOT NULL`, name, tokenHash(token), db.now().UnixMilli(), jsonText(pats))
	if err != nil {
		return "", fmt.Errorf("store: create token for %s: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return "", store.Errorf(store.ECONFLICT, "collector %s already has a valid token: revoke it first (restorewatch token revoke %s)", name, name)
	}
	return token, nil
}

// RevokeCollectorToken revokes the token of the collector name: its next
// push is refused.
func (db *DB) RevokeCollectorToken(ctx context.Context, name string) error {
	res, err := db.write.ExecContext(ctx, `UPDATE collector_token SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL`,
		db.now().UnixMilli(), name)
	if err != nil {
		return fmt.Errorf("store: revoke token of %s: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.Errorf(store.ENOTFOUND, "no valid token for collector %s (restorewatch token list shows them)", name)
	}
	return nil
}

// CollectorTokens lists the collectors' tokens by name, revoked ones too.
func (db *DB) CollectorTokens(ctx context.Context) ([]store.CollectorToken, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT t.name, t.created_at, t.revoked_at, t.used_at, t.instances,
			COALESCE((SELECT json_group_array(instance) FROM (SELECT instance FROM collector_instance AS c
				WHERE c.collector = t.name ORDER BY instance)), '[]'), t.ags
		FROM collector_token AS t ORDER BY t.name`)
	if err != nil {
		return nil, fmt.Errorf("store: list tokens: %w", err)
	}
	defer rows.Close()
	var out []store.CollectorToken
	for rows.Next() {
		var t store.CollectorToken
		var created int64
		var revoked, used sql.NullInt64
		var pats, claimed, ags string
		if err := rows.Scan(&t.Name, &created, &revoked, &used, &pats, &claimed, &ags); err != nil {
			return nil, fmt.Errorf("store: list tokens: %w", err)
		}
		_ = json.Unmarshal([]byte(pats), &t.Instances)
		_ = json.Unmarshal([]byte(claimed), &t.Claimed)
		_ = json.Unmarshal([]byte(ags), &t.AGs)
		t.Created, t.Revoked, t.Used = store.UnixMs(created), nTime(revoked), nTime(used)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list tokens: %w", err)
	}
	return out, nil
}

// CollectorForToken returns the name of the collector whose valid token
// token is; an unknown or revoked token is ENOTFOUND, with one message for
// both. Only hashes are compared (the lookup is by the SHA-256 of the
// presented token, which tells a timing observer nothing about a stored
// one; the final check is constant-time all the same).
func (db *DB) CollectorForToken(ctx context.Context, token string) (string, error) {
	refused := store.Errorf(store.ENOTFOUND, "unknown or revoked collector token")
	if len(token) != len(tokenPrefix)+43 {
		return "", refused
	}
	want := tokenHash(token)
	var name, hash string
	var revoked sql.NullInt64
	err := db.read.QueryRowContext(ctx, `SELECT name, hash, revoked_at FROM collector_token WHERE hash = ?`, want).
		Scan(&name, &hash, &revoked)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", refused
	case err != nil:
		return "", fmt.Errorf("store: check collector token: %w", err)
	case revoked.Valid || subtle.ConstantTimeCompare([]byte(hash), []byte(want)) != 1:
		return "", refused
	}
	return name, nil
}

// PushApplied reports whether the batch of collector was applied already.
func (db *DB) PushApplied(ctx context.Context, collector, batch string) (bool, error) {
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM push_batch WHERE collector = ? AND batch = ?`, collector, batch).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: push batch %s/%s: %w", collector, batch, err)
	}
	return n > 0, nil
}

// keepPushBatches is how long applied batch ids are remembered: far longer
// than a collector retries one (its spool), so a late replay is still
// recognised; one forgotten would be applied again and add nothing.
const keepPushBatches = 30 * 24 * time.Hour

// RecordPush remembers that collector's batch was applied (records handed
// in, added), stores the batch's collector run records (each with a new id
// on this server), notes the token's use and forgets batch ids past
// keepPushBatches, in one transaction: a batch of run records only. A
// batch of records is marked by the import that applies it
// (Import.MarkPush), in the transaction of its records, so a batch whose
// apply was cut short (kill -9) left nothing and its resend applies it
// whole, once.
func (db *DB) RecordPush(ctx context.Context, collector, batch string, records, added int64, runs ...store.CollectorRun) error {
	if err := checkRuns(runs); err != nil {
		return err
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: record push %s/%s: %w", collector, batch, err)
	}
	defer tx.Rollback()
	if _, err := db.recordPush(ctx, tx, collector, batch, records, added, runs); err != nil {
		return fmt.Errorf("store: record push %s/%s: %w", collector, batch, err)
	}
	if err := tx.Commit(); err != nil {
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
// marked false says another apply marked it first (tx then stores
// nothing).
func (db *DB) recordPush(ctx context.Context, tx *sql.Tx, collector, batch string, records, added int64, runs []store.CollectorRun) (marked bool, err error) {
	if err := checkRuns(runs); err != nil {
		return false, err
	}
	now := db.now()
	var applied int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM push_batch WHERE collector = ? AND batch = ?`, collector, batch).Scan(&applied); err != nil {
		return false, err
	}
	if applied > 0 {
		return false, nil // a concurrent apply of the same batch marked it first
	}
	for _, r := range runs {
		finished := now
		if r.Finished != nil {
			finished = *r.Finished
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO collector_run (instance, started, finished, status, rows, errors, notes)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, store.InstanceName(r.Instance), r.Started.UnixMilli(), finished.UnixMilli(), r.Status,
			jsonText(nonNilCounts(r.Rows)), jsonText(nonNilMap(r.Errors)), jsonText(nonNil(r.Notes))); err != nil {
			return false, fmt.Errorf("run of %s: %w", r.Instance, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM collector_run WHERE instance = ?1
			AND id <= (SELECT id FROM collector_run WHERE instance = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)`,
			store.InstanceName(r.Instance), keepRuns); err != nil {
			return false, fmt.Errorf("prune runs: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO push_batch (collector, batch, applied_at, records, added) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, collector, batch, now.UnixMilli(), records, added); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE collector_token SET used_at = ? WHERE name = ?`, now.UnixMilli(), collector); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM push_batch WHERE applied_at < ?`, now.Add(-keepPushBatches).UnixMilli()); err != nil {
		return false, err
	}
	return true, nil
}
