package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

// BackupReplicas finds the instances whose backup history is the history
// of database as named by name: an instance, or an availability group's
// name or listener. An instance's database that is an AG database (the
// collector's membership, or an import that named the AG) brings every
// replica of that AG database; without membership, the instances that
// backed up a database of the same name with the same family GUID on the
// same recovery fork are taken as replicas, and Via says so. A name that is
// neither gives the name alone.
func (db *DB) BackupReplicas(ctx context.Context, name, database string) (store.Replicas, error) {
	out := store.Replicas{Instances: []string{store.InstanceName(name)}, Database: store.DatabaseName(database)}
	type member struct{ instance, database, ag, listener, groupDB string }
	rows, err := db.read.QueryContext(ctx, `SELECT i.name, a.database_name, a.ag_name, a.listener, a.group_database_id
		FROM ag_database a JOIN instance i ON i.id = a.instance_id
		WHERE a.ag_name IN (SELECT ag_name FROM ag_database a2 JOIN instance i2 ON i2.id = a2.instance_id
			WHERE i2.name = ?1 OR a2.ag_name = ?1 OR a2.listener = ?1)
		ORDER BY i.name`, store.InstanceName(name))
	if err != nil {
		return out, fmt.Errorf("store: replicas: %w", err)
	}
	var ms []member
	for rows.Next() {
		var m member
		if err := rows.Scan(&m.instance, &m.database, &m.ag, &m.listener, &m.groupDB); err != nil {
			rows.Close()
			return out, fmt.Errorf("store: replicas: %w", err)
		}
		ms = append(ms, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("store: replicas: %w", err)
	}
	// The AG database named: the named instance's, else any replica's
	// (the name is the AG's or its listener's).
	var ag, groupDB string
	for _, m := range ms {
		if m.database != out.Database {
			continue
		}
		if strings.EqualFold(m.instance, name) {
			ag, groupDB = m.ag, m.groupDB
			break
		}
		if ag == "" && (strings.EqualFold(m.ag, name) || strings.EqualFold(m.listener, name)) {
			ag, groupDB = m.ag, m.groupDB
		}
	}
	if ag != "" {
		var insts []string
		for _, m := range ms {
			if !strings.EqualFold(m.ag, ag) {
				continue
			}
			same := m.database == out.Database
			if groupDB != "" && m.groupDB != "" {
				same = m.groupDB == groupDB // renamed on a replica, still the one AG database
			}
			if same && !slices.ContainsFunc(insts, func(s string) bool { return strings.EqualFold(s, m.instance) }) {
				insts = append(insts, m.instance)
			}
		}
		// The named instance first, if it is one of them.
		if i := slices.IndexFunc(insts, func(s string) bool { return strings.EqualFold(s, name) }); i > 0 {
			named := insts[i]
			insts = slices.Insert(slices.Delete(insts, i, i+1), 0, named)
		}
		out.Instances = insts
		out.Via = fmt.Sprintf("availability group %s (replicas %s)", ag, strings.Join(insts, ", "))
		return out, nil
	}
	return db.familyReplicas(ctx, out)
}

// familyReplicas is BackupReplicas without membership: the instances with
// backups of a database of the same name, family GUID and recovery fork as
// out's instance's newest backup of it. A restored copy shares the family
// GUID but, once recovered, not the fork, so it is not taken for a replica.
func (db *DB) familyReplicas(ctx context.Context, out store.Replicas) (store.Replicas, error) {
	var id int64
	var family, fork string
	err := db.read.QueryRowContext(ctx, `SELECT b.instance_id, b.family_guid, b.last_recovery_fork_guid FROM backup_set b
		WHERE b.instance_id = (SELECT id FROM instance WHERE name = ?) AND b.database_name = ?
		ORDER BY b.finish_utc DESC LIMIT 1`, out.Instances[0], out.Database).Scan(&id, &family, &fork)
	if err == nil && family == "" {
		return db.lsnCandidates(ctx, out, id)
	}
	if err == sql.ErrNoRows || err == nil && fork == "" {
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("store: replicas: %w", err)
	}
	rows, err := db.read.QueryContext(ctx, `SELECT i.name FROM instance i WHERE i.id IN (SELECT b.instance_id FROM backup_set b
		WHERE b.family_guid = ? AND b.database_name = ? AND b.last_recovery_fork_guid = ? AND b.instance_id <> ?)
		ORDER BY i.name`, family, out.Database, fork, id)
	if err != nil {
		return out, fmt.Errorf("store: replicas: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return out, fmt.Errorf("store: replicas: %w", err)
		}
		out.Instances = append(out.Instances, n)
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("store: replicas: %w", err)
	}
	if len(out.Instances) > 1 {
		out.Via = fmt.Sprintf("the same database name, family GUID and recovery fork on %s (no availability-group membership recorded)",
			strings.Join(out.Instances, ", "))
	}
	return out, nil
}

// maxCandidates bounds the instances a plan reads to prove by LSN that they
// continue a chain: a database name shared by a whole fleet ("DBA") would
// otherwise read every instance's history.
const maxCandidates = 16

// lsnCandidates lists, for a history that names no availability group and
// no family GUID (an msdb export without those columns), the other
// instances that recorded backups of a database of the same name: only
// their LSNs can say whether they are replicas (store.Replicas.Candidates).
func (db *DB) lsnCandidates(ctx context.Context, out store.Replicas, id int64) (store.Replicas, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT i.name FROM instance i WHERE i.id <> ?
		AND EXISTS (SELECT 1 FROM backup_set b WHERE b.instance_id = i.id AND b.database_name = ?)
		ORDER BY i.name LIMIT ?`, id, out.Database, maxCandidates)
	if err != nil {
		return out, fmt.Errorf("store: replicas: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return out, fmt.Errorf("store: replicas: %w", err)
		}
		out.Candidates = append(out.Candidates, n)
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("store: replicas: %w", err)
	}
	return out, nil
}
