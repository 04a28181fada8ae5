package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
)

// BackupReplicas finds the instances whose backup history is the history
// of database as named by name (an instance, an availability group or a
// listener): membership decides as on SQLite (store.ReplicasByAG), else
// the same family GUID and recovery fork within the named instance's zone,
// else candidates a plan proves by LSN.
func (db *DB) BackupReplicas(ctx context.Context, name, database string) (store.Replicas, error) {
	out := store.Replicas{Instances: []string{store.InstanceName(name)}, Database: store.DatabaseName(database)}
	rows, err := db.pool.Query(ctx, `SELECT i.name::text, a.database_name, a.ag_name::text, a.listener::text, a.group_database_id,
			COALESCE((SELECT c.collector::text FROM collector_instance c WHERE c.instance = i.name), '')
		FROM ag_database a JOIN instance i ON i.id = a.instance_id
		WHERE a.ag_name IN (SELECT a2.ag_name FROM ag_database a2 JOIN instance i2 ON i2.id = a2.instance_id
			WHERE i2.name = $1 OR a2.ag_name = $1 OR a2.listener = $1)
		ORDER BY i.name`, store.InstanceName(name))
	if err != nil {
		return out, fmt.Errorf("store: replicas: %w", err)
	}
	ms, err := collect(rows, func(row pgx.CollectableRow) (store.AGMember, error) {
		var m store.AGMember
		err := row.Scan(&m.Instance, &m.Database, &m.AG, &m.Listener, &m.GroupDB, &m.Zone)
		return m, err
	})
	if err != nil {
		return out, fmt.Errorf("store: replicas: %w", err)
	}
	var zone string
	err = db.pool.QueryRow(ctx, `SELECT COALESCE((SELECT c.collector::text FROM collector_instance c WHERE c.instance = i.name), '')
		FROM instance i WHERE i.name = $1`, out.Instances[0]).Scan(&zone)
	isInstance := err == nil
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return out, fmt.Errorf("store: replicas: %w", err)
	}
	trust := map[string][]string{}
	trows, err := db.pool.Query(ctx, `SELECT name::text, ags FROM collector_token WHERE ags <> '[]' AND revoked_at IS NULL`)
	if err != nil {
		return out, fmt.Errorf("store: replicas: %w", err)
	}
	for trows.Next() {
		var n, raw string
		if err := trows.Scan(&n, &raw); err != nil {
			trows.Close()
			return out, fmt.Errorf("store: replicas: %w", err)
		}
		var ags []string
		_ = json.Unmarshal([]byte(raw), &ags)
		trust[strings.ToUpper(n)] = ags
	}
	trows.Close()
	if err := trows.Err(); err != nil {
		return out, fmt.Errorf("store: replicas: %w", err)
	}
	if r, ok := store.ReplicasByAG(name, out, ms, isInstance, trust); ok {
		return r, nil
	}
	return db.familyReplicas(ctx, out, zone)
}

// maxCandidates bounds the instances a plan reads to prove by LSN.
const maxCandidates = 16

func (db *DB) familyReplicas(ctx context.Context, out store.Replicas, zone string) (store.Replicas, error) {
	var id int64
	var family, fork string
	err := db.pool.QueryRow(ctx, `SELECT b.instance_id, b.family_guid, b.last_recovery_fork_guid FROM backup_set b
		WHERE b.instance_id = (SELECT id FROM instance WHERE name = $1) AND b.database_name = $2
		ORDER BY b.finish_utc DESC LIMIT 1`, out.Instances[0], out.Database).Scan(&id, &family, &fork)
	if err == nil && family == "" {
		out.Candidates, err = db.namesOf(ctx, `SELECT i.name::text FROM instance i WHERE i.id <> $1
			AND EXISTS (SELECT 1 FROM backup_set b WHERE b.instance_id = i.id AND b.database_name = $2)
			AND COALESCE((SELECT c.collector::text FROM collector_instance c WHERE c.instance = i.name), '') = $3
			ORDER BY i.name LIMIT $4`, id, out.Database, zone, maxCandidates)
		return out, err
	}
	if errors.Is(err, pgx.ErrNoRows) || err == nil && fork == "" {
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("store: replicas: %w", err)
	}
	more, err := db.namesOf(ctx, `SELECT i.name::text FROM instance i WHERE i.id IN (SELECT b.instance_id FROM backup_set b
		WHERE b.family_guid = $1 AND b.database_name = $2 AND b.last_recovery_fork_guid = $3 AND b.instance_id <> $4)
		AND COALESCE((SELECT c.collector::text FROM collector_instance c WHERE c.instance = i.name), '') = $5
		ORDER BY i.name`, family, out.Database, fork, id, zone)
	if err != nil {
		return out, err
	}
	out.Instances = append(out.Instances, more...)
	if len(out.Instances) > 1 {
		out.Via = fmt.Sprintf("the same database name, family GUID and recovery fork on %s (no availability-group membership recorded), on the word of %s",
			strings.Join(out.Instances, ", "), store.ZoneWord(zone))
	}
	return out, nil
}

func (db *DB) namesOf(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: replicas: %w", err)
	}
	out, err := collect(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store: replicas: %w", err)
	}
	return out, nil
}
