package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

// A zone is who speaks for an instance: "" for this server's own imports
// and collector, else the collector that pushed it first (collector_instance).
// Membership of an availability group, a listener's name and a family GUID
// are claims a zone makes about other instances; a plan takes them only
// within the zone that made them, or across zones where the operator said
// so (token create --ag): an instance of zone A is never merged into the
// plan of an instance of zone B on A's word alone.

// agTrust returns, for each collector, the AGs the operator lets its
// replicas join across zones.
func (db *DB) agTrust(ctx context.Context) (map[string][]string, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT name, ags FROM collector_token WHERE ags <> '[]' AND revoked_at IS NULL`)
	if err != nil {
		return nil, fmt.Errorf("store: replicas: %w", err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var name, raw string
		if err := rows.Scan(&name, &raw); err != nil {
			return nil, fmt.Errorf("store: replicas: %w", err)
		}
		var ags []string
		_ = json.Unmarshal([]byte(raw), &ags)
		out[strings.ToUpper(name)] = ags
	}
	return out, rows.Err()
}

// SetCollectorAGs records the availability groups whose replicas the
// collector name's zone may join with other zones' in a restore plan (the
// operator's word; none: its claims stay within its zone).
func (db *DB) SetCollectorAGs(ctx context.Context, name string, ags []string) error {
	clean := []string{}
	for _, a := range ags {
		if a = store.InstanceName(a); a != "" && !slices.ContainsFunc(clean, func(c string) bool { return strings.EqualFold(c, a) }) {
			clean = append(clean, a)
		}
	}
	res, err := db.write.ExecContext(ctx, `UPDATE collector_token SET ags = ? WHERE name = ?`, jsonText(clean), name)
	if err != nil {
		return fmt.Errorf("store: set AGs of %s: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.Errorf(store.ENOTFOUND, "no token for collector %s (restorewatch token list shows them)", name)
	}
	return nil
}

// instanceZone returns the zone of the instance name and whether this
// warehouse holds it at all.
func (db *DB) instanceZone(ctx context.Context, name string) (zone string, held bool, err error) {
	err = db.read.QueryRowContext(ctx, `SELECT COALESCE((SELECT collector FROM collector_instance WHERE instance = i.name), '')
		FROM instance i WHERE i.name = ?`, name).Scan(&zone)
	if err == sql.ErrNoRows {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("store: replicas: %w", err)
	}
	return zone, true, nil
}

// BackupReplicas finds the instances whose backup history is the history
// of database as named by name: an instance, or an availability group's
// name or listener. An instance's database that is an AG database (the
// collector's membership, or an import that named the AG) brings every
// replica of that AG database that its zone speaks for; without
// membership, the instances of its zone that backed up a database of the
// same name with the same family GUID on the same recovery fork are taken
// as replicas. Via says which, and on whose word. A name that is neither
// gives the name alone.
//
// An instance's own name always means that instance: an AG or listener of
// the same name claimed by some zone does not redirect it. An AG or
// listener name means the AG that this server's own imports record, else
// the one a single zone (or the zones the operator trusts with it) records.
func (db *DB) BackupReplicas(ctx context.Context, name, database string) (store.Replicas, error) {
	out := store.Replicas{Instances: []string{store.InstanceName(name)}, Database: store.DatabaseName(database)}
	rows, err := db.read.QueryContext(ctx, `SELECT i.name, a.database_name, a.ag_name, a.listener, a.group_database_id,
			COALESCE((SELECT collector FROM collector_instance c WHERE c.instance = i.name), '')
		FROM ag_database a JOIN instance i ON i.id = a.instance_id
		WHERE a.ag_name IN (SELECT ag_name FROM ag_database a2 JOIN instance i2 ON i2.id = a2.instance_id
			WHERE i2.name = ?1 OR a2.ag_name = ?1 OR a2.listener = ?1)
		ORDER BY i.name`, store.InstanceName(name))
	if err != nil {
		return out, fmt.Errorf("store: replicas: %w", err)
	}
	var ms []store.AGMember
	for rows.Next() {
		var m store.AGMember
		if err := rows.Scan(&m.Instance, &m.Database, &m.AG, &m.Listener, &m.GroupDB, &m.Zone); err != nil {
			rows.Close()
			return out, fmt.Errorf("store: replicas: %w", err)
		}
		ms = append(ms, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("store: replicas: %w", err)
	}
	namedZone, isInstance, err := db.instanceZone(ctx, out.Instances[0])
	if err != nil {
		return out, err
	}
	trust, err := db.agTrust(ctx)
	if err != nil {
		return out, err
	}
	if r, ok := store.ReplicasByAG(name, out, ms, isInstance, trust); ok {
		return r, nil
	}
	return db.familyReplicas(ctx, out, namedZone)
}

// familyReplicas is BackupReplicas without membership: the instances of
// zone with backups of a database of the same name, family GUID and
// recovery fork as out's instance's newest backup of it. A restored copy
// shares the family GUID but, once recovered, not the fork, so it is not
// taken for a replica; another zone's instance that shows the same GUIDs
// (which a plan prints) is not taken either: a zone speaks for its own.
func (db *DB) familyReplicas(ctx context.Context, out store.Replicas, zone string) (store.Replicas, error) {
	var id int64
	var family, fork string
	err := db.read.QueryRowContext(ctx, `SELECT b.instance_id, b.family_guid, b.last_recovery_fork_guid FROM backup_set b
		WHERE b.instance_id = (SELECT id FROM instance WHERE name = ?) AND b.database_name = ?
		ORDER BY b.finish_utc DESC LIMIT 1`, out.Instances[0], out.Database).Scan(&id, &family, &fork)
	if err == nil && family == "" {
		return db.lsnCandidates(ctx, out, id, zone)
	}
	if err == sql.ErrNoRows || err == nil && fork == "" {
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("store: replicas: %w", err)
	}
	more, err := db.namesOf(ctx, `SELECT i.name FROM instance i WHERE i.id IN (SELECT b.instance_id FROM backup_set b
		WHERE b.family_guid = ? AND b.database_name = ? AND b.last_recovery_fork_guid = ? AND b.instance_id <> ?)
		AND COALESCE((SELECT collector FROM collector_instance c WHERE c.instance = i.name), '') = ?
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

// maxCandidates bounds the instances a plan reads to prove by LSN that they
// continue a chain: a database name shared by a whole fleet ("DBA") would
// otherwise read every instance's history.
const maxCandidates = 16

// lsnCandidates lists, for a history that names no availability group and
// no family GUID (an msdb export without those columns), the other
// instances that recorded backups of a database of the same name: only
// their LSNs can say whether they are replicas (store.Replicas.Candidates).
// Only instances of the same zone are candidates: LSNs are shown by every
// plan, so another zone could forge a continuation (issue 40).
func (db *DB) lsnCandidates(ctx context.Context, out store.Replicas, id int64, zone string) (store.Replicas, error) {
	var err error
	out.Candidates, err = db.namesOf(ctx, `SELECT i.name FROM instance i WHERE i.id <> ?
		AND EXISTS (SELECT 1 FROM backup_set b WHERE b.instance_id = i.id AND b.database_name = ?)
		AND COALESCE((SELECT collector FROM collector_instance c WHERE c.instance = i.name), '') = ?
		ORDER BY i.name LIMIT ?`, id, out.Database, zone, maxCandidates)
	return out, err
}

// namesOf runs a query of instance names for BackupReplicas.
func (db *DB) namesOf(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: replicas: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("store: replicas: %w", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: replicas: %w", err)
	}
	return out, nil
}
