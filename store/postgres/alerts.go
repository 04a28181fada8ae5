package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
)

// The alerts' outbox on PostgreSQL: store/sqlite's rules, made safe for
// several replicas sending from one warehouse (deliveries claimed with
// FOR UPDATE SKIP LOCKED, a condition started once whoever finds it first).

// enqueueAlert writes e to the outbox in the caller's transaction; a key
// queued again does nothing.
func enqueueAlert(ctx context.Context, tx pgx.Tx, e store.AlertEvent) error {
	if e.Severity == "" {
		e.Severity = store.SeverityInfo
	}
	if e.Since.IsZero() {
		e.Since = time.Now()
	}
	if err := e.Validate(); err != nil {
		return err
	}
	e.Since = e.Since.UTC()
	body, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("store: queue alert %s: %w", e.Key, err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO alert_event (key, kind, severity, instance, database_name, body, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (key) DO NOTHING`,
		e.Key, e.Kind, e.Severity, e.Instance, e.Database, string(body), time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("store: queue alert %s: %w", e.Key, err)
	}
	return nil
}

// EnqueueAlerts writes events to the outbox in one transaction.
func (db *DB) EnqueueAlerts(ctx context.Context, es ...store.AlertEvent) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		for _, e := range es {
			if err := enqueueAlert(ctx, tx, e); err != nil {
				return err
			}
		}
		return nil
	})
}

// SyncAlertConditions records which conditions of kind hold now and queues
// the event of each that starts (store/sqlite's rules); a condition two
// replicas find at once starts, and alerts, once.
func (db *DB) SyncAlertConditions(ctx context.Context, kind string, found []store.AlertEvent) (int, error) {
	queued := 0
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		queued = 0
		rows, err := tx.Query(ctx, `SELECT cond FROM alert_condition WHERE kind = $1`, kind)
		if err != nil {
			return err
		}
		conds, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		held := map[string]bool{}
		for _, c := range conds {
			held[c] = true
		}
		now := db.now()
		seen := map[string]bool{}
		for _, e := range found {
			cond := e.Key
			if seen[cond] {
				continue
			}
			seen[cond] = true
			if held[cond] {
				continue
			}
			tag, err := tx.Exec(ctx, `INSERT INTO alert_condition (cond, kind, since) VALUES ($1, $2, $3) ON CONFLICT (cond) DO NOTHING`,
				cond, kind, now.UnixMilli())
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				continue // another replica started it
			}
			e.Key = fmt.Sprintf("%s/%d", cond, now.UnixMilli())
			if e.Since.IsZero() {
				e.Since = now
			}
			if err := enqueueAlert(ctx, tx, e); err != nil {
				return err
			}
			queued++
		}
		for c := range held {
			if !seen[c] {
				if _, err := tx.Exec(ctx, `DELETE FROM alert_condition WHERE cond = $1`, c); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: alert conditions: %w", err)
	}
	return queued, nil
}

// RouteAlerts makes the deliveries of up to limit events not yet routed,
// oldest first, and marks them routed, in one transaction; events another
// replica is routing are skipped.
func (db *DB) RouteAlerts(ctx context.Context, limit int, route func(*store.Alert) []store.AlertDelivery) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		as, err := scanAlerts(tx.Query(ctx, `SELECT `+alertColumns+` FROM alert_event WHERE routed = 0 ORDER BY id LIMIT $1
			FOR UPDATE SKIP LOCKED`, limit))
		if err != nil {
			return err
		}
		for i := range as {
			a := &as[i]
			for _, d := range route(a) {
				state := d.State
				if state == "" {
					state = store.DeliveryPending
				}
				if _, err := tx.Exec(ctx, `INSERT INTO alert_delivery (event_id, channel, mode, state, next_at, note)
					VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (event_id, channel) DO NOTHING`,
					a.ID, d.Channel, d.Mode, state, d.NextAt.UnixMilli(), d.Note); err != nil {
					return err
				}
			}
			if _, err := tx.Exec(ctx, `UPDATE alert_event SET routed = 1 WHERE id = $1`, a.ID); err != nil {
				return err
			}
		}
		n = len(as)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: route alerts: %w", err)
	}
	return n, nil
}

// AlertTags returns the tags of an instance (empty when unknown).
func (db *DB) AlertTags(ctx context.Context, instance string) (map[string]string, error) {
	var s string
	err := db.pool.QueryRow(ctx, `SELECT tags FROM instance WHERE name = $1`, store.InstanceName(instance)).Scan(&s)
	if errors.Is(err, pgx.ErrNoRows) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: tags of %s: %w", instance, err)
	}
	tags := map[string]string{}
	_ = json.Unmarshal([]byte(s), &tags)
	return tags, nil
}

// ClaimDeliveries returns and claims for lease the deliveries to channel
// in mode due by horizon, when one is due at now (store/sqlite's rules).
// Rows another replica is claiming are skipped, not waited for: two
// senders never send one delivery.
func (db *DB) ClaimDeliveries(ctx context.Context, channel, mode string, now, horizon time.Time, lease time.Duration, limit int) ([]store.Alert, error) {
	if horizon.Before(now) {
		horizon = now
	}
	var out []store.Alert
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		out = nil
		var first *int64
		if err := tx.QueryRow(ctx, `SELECT MIN(next_at) FROM alert_delivery
			WHERE channel = $1 AND mode = $2 AND state IN ('pending', 'retrying')`, channel, mode).Scan(&first); err != nil {
			return err
		}
		if first == nil || *first > now.UnixMilli() {
			return nil
		}
		rows, err := tx.Query(ctx, `SELECT `+alertColumnsOf("e")+`, d.mode, d.state, d.attempts, d.next_at, d.last_error
			FROM alert_delivery d JOIN alert_event e ON e.id = d.event_id
			WHERE d.channel = $1 AND d.mode = $2 AND d.state IN ('pending', 'retrying') AND d.next_at <= $3
			ORDER BY d.next_at, e.id LIMIT $4 FOR UPDATE OF d SKIP LOCKED`, channel, mode, horizon.UnixMilli(), limit)
		if err != nil {
			return err
		}
		for rows.Next() {
			d := store.AlertDelivery{Channel: channel}
			var next int64
			a, err := scanAlert(rows, &d.Mode, &d.State, &d.Attempts, &next, &d.LastError)
			if err != nil {
				rows.Close()
				return err
			}
			d.NextAt = time.UnixMilli(next).UTC()
			a.Deliveries = []store.AlertDelivery{d}
			out = append(out, a)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if lease > 0 {
			for i := range out {
				if _, err := tx.Exec(ctx, `UPDATE alert_delivery SET next_at = $1 WHERE event_id = $2 AND channel = $3`,
					now.Add(lease).UnixMilli(), out[i].ID, channel); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: due alerts of %s: %w", channel, err)
	}
	return out, nil
}

// MarkDeliveries records the outcome of attempts on channel in one
// transaction.
func (db *DB) MarkDeliveries(ctx context.Context, channel string, rs []store.DeliveryResult) error {
	if len(rs) == 0 {
		return nil
	}
	now := db.now().UnixMilli()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		for _, r := range rs {
			var err error
			switch r.State {
			case store.DeliverySent:
				_, err = tx.Exec(ctx, `UPDATE alert_delivery SET state = 'sent', attempts = attempts + 1, sent_at = $1,
					last_error = '' WHERE event_id = $2 AND channel = $3`, now, r.AlertID, channel)
			case store.DeliverySilenced:
				_, err = tx.Exec(ctx, `UPDATE alert_delivery SET state = 'silenced', note = $1 WHERE event_id = $2 AND channel = $3`,
					r.Note, r.AlertID, channel)
			case store.DeliveryRetrying:
				_, err = tx.Exec(ctx, `UPDATE alert_delivery SET state = 'retrying', attempts = attempts + 1, next_at = $1,
					last_error = $2 WHERE event_id = $3 AND channel = $4`, r.NextAt.UnixMilli(), r.Error, r.AlertID, channel)
			default:
				err = fmt.Errorf("unknown state %q", r.State)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: mark deliveries: %w", err)
	}
	return nil
}

// Alerts returns the newest alerts matching f, with their deliveries.
func (db *DB) Alerts(ctx context.Context, f store.AlertFilter) ([]store.Alert, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 200
	}
	var conds []string
	var p params
	if f.Kind != "" {
		conds = append(conds, "kind = "+p.add(f.Kind))
	}
	if f.Instance != "" {
		conds = append(conds, "lower(instance) = lower("+p.add(store.InstanceName(f.Instance))+")")
	}
	if f.State != "" {
		conds = append(conds, "id IN (SELECT event_id FROM alert_delivery WHERE state = "+p.add(f.State)+")")
	}
	q := `SELECT ` + alertColumns + ` FROM alert_event` + where(conds) + ` ORDER BY id DESC LIMIT ` + p.add(limit)
	as, err := scanAlerts(db.pool.Query(ctx, q, p...))
	if err != nil {
		return nil, fmt.Errorf("store: alerts: %w", err)
	}
	if len(as) == 0 {
		return as, nil
	}
	idx := map[int64]int{}
	for i := range as {
		idx[as[i].ID] = i
	}
	rows, err := db.pool.Query(ctx, `SELECT event_id, channel, mode, state, attempts, next_at, last_error, sent_at, note
		FROM alert_delivery WHERE event_id BETWEEN $1 AND $2 ORDER BY event_id, channel`, as[len(as)-1].ID, as[0].ID)
	if err != nil {
		return nil, fmt.Errorf("store: alerts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, next int64
		var sent *int64
		var d store.AlertDelivery
		if err := rows.Scan(&id, &d.Channel, &d.Mode, &d.State, &d.Attempts, &next, &d.LastError, &sent, &d.Note); err != nil {
			return nil, fmt.Errorf("store: alerts: %w", err)
		}
		i, ok := idx[id]
		if !ok {
			continue
		}
		d.NextAt = time.UnixMilli(next).UTC()
		if sent != nil {
			t := time.UnixMilli(*sent).UTC()
			d.SentAt = &t
		}
		as[i].Deliveries = append(as[i].Deliveries, d)
	}
	return as, rows.Err()
}

// AckAlert acknowledges the alert with id or key ref and silences its
// deliveries not yet sent.
func (db *DB) AckAlert(ctx context.Context, ref, by, why string) (store.Alert, error) {
	if strings.TrimSpace(by) == "" || strings.TrimSpace(why) == "" {
		return store.Alert{}, store.Errorf(store.EINVALID, "acknowledge: say who and why")
	}
	var a store.Alert
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		as, err := scanAlerts(tx.Query(ctx, `SELECT `+alertColumns+` FROM alert_event WHERE key = $1 OR id::text = $1`, ref))
		if err != nil {
			return err
		}
		if len(as) == 0 {
			return store.Errorf(store.ENOTFOUND, "no alert with id or key %q", ref)
		}
		a = as[0]
		now := db.now()
		if _, err := tx.Exec(ctx, `UPDATE alert_event SET acked_by = $1, ack_note = $2, acked_at = $3 WHERE id = $4`,
			by, why, now.UnixMilli(), a.ID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE alert_delivery SET state = 'silenced', note = $1 WHERE event_id = $2 AND state IN ('pending', 'retrying')`,
			"acknowledged by "+by, a.ID); err != nil {
			return err
		}
		a.AckedBy, a.AckNote, a.AckedAt = by, why, &now
		return nil
	})
	if err != nil {
		if store.ErrorCode(err) == store.ENOTFOUND {
			return store.Alert{}, err
		}
		return store.Alert{}, fmt.Errorf("store: acknowledge alert: %w", err)
	}
	return a, nil
}

// AddSilence keeps a silence and returns its id.
func (db *DB) AddSilence(ctx context.Context, s store.AlertSilence) (int64, error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	var id int64
	err := db.pool.QueryRow(ctx, `INSERT INTO alert_silence (instance, kind, key, created_by, reason, created_at, until_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`, s.Instance, s.Kind, s.Key, s.By, s.Why, db.now().UnixMilli(), s.Until.UnixMilli()).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("store: add silence: %w", err)
	}
	return id, nil
}

// EndSilence ends a silence now (it stays listed as ended).
func (db *DB) EndSilence(ctx context.Context, id int64) error {
	tag, err := db.pool.Exec(ctx, `UPDATE alert_silence SET until_at = LEAST(until_at, $1) WHERE id = $2`, db.now().UnixMilli(), id)
	if err != nil {
		return fmt.Errorf("store: end silence: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return store.Errorf(store.ENOTFOUND, "no silence %d", id)
	}
	return nil
}

// Silences returns the silences that end after since, newest first.
func (db *DB) Silences(ctx context.Context, since time.Time) ([]store.AlertSilence, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, instance, kind, key, created_by, reason, created_at, until_at
		FROM alert_silence WHERE until_at > $1 ORDER BY id DESC`, since.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("store: silences: %w", err)
	}
	out, err := collect(rows, func(row pgx.CollectableRow) (store.AlertSilence, error) {
		var s store.AlertSilence
		var created, until int64
		err := row.Scan(&s.ID, &s.Instance, &s.Kind, &s.Key, &s.By, &s.Why, &created, &until)
		s.Created, s.Until = time.UnixMilli(created).UTC(), time.UnixMilli(until).UTC()
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: silences: %w", err)
	}
	return out, nil
}

// AlertDeliveryCounts counts the deliveries not yet over by state.
func (db *DB) AlertDeliveryCounts(ctx context.Context) (map[string]int64, error) {
	rows, err := db.pool.Query(ctx, `SELECT state, COUNT(*) FROM alert_delivery WHERE state IN ('pending', 'retrying') GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("store: alert delivery counts: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var st string
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("store: alert delivery counts: %w", err)
		}
		out[st] = n
	}
	return out, rows.Err()
}

// PruneAlerts deletes the alerts queued before before whose deliveries are
// all over, and the silences that ended before it.
func (db *DB) PruneAlerts(ctx context.Context, before time.Time) (int64, error) {
	tag, err := db.pool.Exec(ctx, `DELETE FROM alert_event WHERE created_at < $1 AND routed = 1
		AND NOT EXISTS (SELECT 1 FROM alert_delivery d WHERE d.event_id = alert_event.id AND d.state IN ('pending', 'retrying'))`,
		before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("store: prune alerts: %w", err)
	}
	if _, err := db.pool.Exec(ctx, `DELETE FROM alert_silence WHERE until_at < $1`, before.UnixMilli()); err != nil {
		return tag.RowsAffected(), fmt.Errorf("store: prune silences: %w", err)
	}
	return tag.RowsAffected(), nil
}

const alertColumns = `id, body, created_at, routed, acked_by, ack_note, acked_at`

func alertColumnsOf(t string) string {
	return t + ".id, " + t + ".body, " + t + ".created_at, " + t + ".routed, " + t + ".acked_by, " + t + ".ack_note, " + t + ".acked_at"
}

// scanAlert scans one row of alertColumns, then extra.
func scanAlert(sc interface{ Scan(...any) error }, extra ...any) (store.Alert, error) {
	var a store.Alert
	var body string
	var created, routed int64
	var acked *int64
	if err := sc.Scan(append([]any{&a.ID, &body, &created, &routed, &a.AckedBy, &a.AckNote, &acked}, extra...)...); err != nil {
		return a, err
	}
	if err := json.Unmarshal([]byte(body), &a.AlertEvent); err != nil {
		return a, fmt.Errorf("alert %d: %w", a.ID, err)
	}
	a.Routed = routed != 0
	a.Created = time.UnixMilli(created).UTC()
	if acked != nil {
		t := time.UnixMilli(*acked).UTC()
		a.AckedAt = &t
	}
	return a, nil
}

func scanAlerts(rows pgx.Rows, err error) ([]store.Alert, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Alert
	for rows.Next() {
		a, err := scanAlert(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
