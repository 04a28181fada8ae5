package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// enqueueAlert writes e to the outbox in the caller's transaction, so a
// finding and its alert commit together. The outbox keeps one event per
// key: queueing a key again (a re-analysis, a replayed import) does nothing.
//
// An event without a severity is info, one without Since is since now;
// one without a key, kind or title is refused (and with it the caller's
// transaction).
func enqueueAlert(ctx context.Context, tx *sql.Tx, e store.AlertEvent) error {
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
	if _, err := tx.ExecContext(ctx, `INSERT INTO alert_event (key, kind, severity, instance, database_name, body, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`,
		e.Key, e.Kind, e.Severity, e.Instance, e.Database, string(body), time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("store: queue alert %s: %w", e.Key, err)
	}
	return nil
}

// EnqueueAlerts writes events to the outbox in one transaction (each key
// once, as enqueueAlert).
func (db *DB) EnqueueAlerts(ctx context.Context, es ...store.AlertEvent) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: queue alerts: %w", err)
	}
	defer tx.Rollback()
	for _, e := range es {
		if err := enqueueAlert(ctx, tx, e); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// SyncAlertConditions records which conditions of kind hold now: found
// are the events of the conditions found, each keyed by the condition
// (rto_breach/INSTANCE/DB). A condition not held before starts now and
// queues its event, keyed by the condition and when it started (UTC ms), so a breach
// found on every pass is one alert, and a breach that cleared and came back
// is a second one. Conditions of kind not found any more end. It returns
// how many events it queued.
func (db *DB) SyncAlertConditions(ctx context.Context, kind string, found []store.AlertEvent) (int, error) {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: alert conditions: %w", err)
	}
	defer tx.Rollback()
	held := map[string]bool{}
	rows, err := tx.QueryContext(ctx, `SELECT cond FROM alert_condition WHERE kind = ?`, kind)
	if err != nil {
		return 0, fmt.Errorf("store: alert conditions: %w", err)
	}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			rows.Close()
			return 0, fmt.Errorf("store: alert conditions: %w", err)
		}
		held[c] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("store: alert conditions: %w", err)
	}
	now := db.now()
	queued := 0
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
		if _, err := tx.ExecContext(ctx, `INSERT INTO alert_condition (cond, kind, since) VALUES (?, ?, ?)`,
			cond, kind, now.UnixMilli()); err != nil {
			return 0, fmt.Errorf("store: alert conditions: %w", err)
		}
		e.Key = fmt.Sprintf("%s/%d", cond, now.UnixMilli())
		if e.Since.IsZero() {
			e.Since = now
		}
		if err := enqueueAlert(ctx, tx, e); err != nil {
			return 0, err
		}
		queued++
	}
	for c := range held {
		if !seen[c] {
			if _, err := tx.ExecContext(ctx, `DELETE FROM alert_condition WHERE cond = ?`, c); err != nil {
				return 0, fmt.Errorf("store: alert conditions: %w", err)
			}
		}
	}
	return queued, tx.Commit()
}

// RouteAlerts makes the deliveries of up to limit events not yet routed,
// oldest first, with route (the configured routes), and marks them
// routed, in one transaction. An event route sends nowhere is routed all
// the same: it stays on the alerts page. It returns how many it routed.
func (db *DB) RouteAlerts(ctx context.Context, limit int, route func(*store.Alert) []store.AlertDelivery) (int, error) {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: route alerts: %w", err)
	}
	defer tx.Rollback()
	as, err := scanAlerts(tx.QueryContext(ctx, `SELECT `+alertColumns+` FROM alert_event WHERE routed = 0 ORDER BY id LIMIT ?`, limit))
	if err != nil {
		return 0, fmt.Errorf("store: route alerts: %w", err)
	}
	for i := range as {
		a := &as[i]
		for _, d := range route(a) {
			state := d.State
			if state == "" {
				state = store.DeliveryPending
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO alert_delivery (event_id, channel, mode, state, next_at, note)
				VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (event_id, channel) DO NOTHING`,
				a.ID, d.Channel, d.Mode, state, d.NextAt.UnixMilli(), d.Note); err != nil {
				return 0, fmt.Errorf("store: route alerts: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE alert_event SET routed = 1 WHERE id = ?`, a.ID); err != nil {
			return 0, fmt.Errorf("store: route alerts: %w", err)
		}
	}
	return len(as), tx.Commit()
}

// AlertTags returns the tags of an instance (empty when unknown), for routes
// that select by tag.
func (db *DB) AlertTags(ctx context.Context, instance string) (map[string]string, error) {
	var s string
	err := db.read.QueryRowContext(ctx, `SELECT tags FROM instance WHERE name = ?`, store.InstanceName(instance)).Scan(&s)
	if err == sql.ErrNoRows {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: tags of %s: %w", instance, err)
	}
	tags := map[string]string{}
	_ = json.Unmarshal([]byte(s), &tags)
	return tags, nil
}

// ClaimDeliveries returns, when at least one delivery to channel in mode
// is pending or retrying and due at now, up to limit of those due by
// horizon (at or after now: the younger alerts that go with it), oldest
// first, each with that one delivery, and claims them for lease: they are
// not due again until now+lease, so a second sender on the same warehouse
// (serve and collect both running) does not send them too, and a sender
// that died while sending leaves them due again once the lease ends.
// Nothing is marked sent here.
func (db *DB) ClaimDeliveries(ctx context.Context, channel, mode string, now, horizon time.Time, lease time.Duration, limit int) ([]store.Alert, error) {
	if horizon.Before(now) {
		horizon = now
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store: due alerts of %s: %w", channel, err)
	}
	defer tx.Rollback()
	var first sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MIN(next_at) FROM alert_delivery
		WHERE channel = ? AND mode = ? AND state IN ('pending', 'retrying')`, channel, mode).Scan(&first); err != nil {
		return nil, fmt.Errorf("store: due alerts of %s: %w", channel, err)
	}
	if !first.Valid || first.Int64 > now.UnixMilli() {
		return nil, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+alertColumnsOf("e")+`, d.mode, d.state, d.attempts, d.next_at, d.last_error
		FROM alert_delivery d JOIN alert_event e ON e.id = d.event_id
		WHERE d.channel = ? AND d.mode = ? AND d.state IN ('pending', 'retrying') AND d.next_at <= ?
		ORDER BY d.next_at, e.id LIMIT ?`, channel, mode, horizon.UnixMilli(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: due alerts of %s: %w", channel, err)
	}
	var out []store.Alert
	for rows.Next() {
		d := store.AlertDelivery{Channel: channel}
		var next int64
		a, err := scanAlert(rows, &d.Mode, &d.State, &d.Attempts, &next, &d.LastError)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: due alerts of %s: %w", channel, err)
		}
		d.NextAt = time.UnixMilli(next).UTC()
		a.Deliveries = []store.AlertDelivery{d}
		out = append(out, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: due alerts of %s: %w", channel, err)
	}
	if lease > 0 {
		for i := range out {
			if _, err := tx.ExecContext(ctx, `UPDATE alert_delivery SET next_at = ? WHERE event_id = ? AND channel = ?`,
				now.Add(lease).UnixMilli(), out[i].ID, channel); err != nil {
				return nil, fmt.Errorf("store: claim alerts of %s: %w", channel, err)
			}
		}
	}
	return out, tx.Commit()
}

// MarkDeliveries records the outcome of attempts on channel in one
// transaction. The sender calls it only after the receiver answered: a
// delivery is never marked sent before the receiver acknowledged it.
func (db *DB) MarkDeliveries(ctx context.Context, channel string, rs []store.DeliveryResult) error {
	if len(rs) == 0 {
		return nil
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: mark deliveries: %w", err)
	}
	defer tx.Rollback()
	now := db.now().UnixMilli()
	for _, r := range rs {
		var err error
		switch r.State {
		case store.DeliverySent:
			_, err = tx.ExecContext(ctx, `UPDATE alert_delivery SET state = 'sent', attempts = attempts + 1, sent_at = ?,
				last_error = '' WHERE event_id = ? AND channel = ?`, now, r.AlertID, channel)
		case store.DeliverySilenced:
			_, err = tx.ExecContext(ctx, `UPDATE alert_delivery SET state = 'silenced', note = ? WHERE event_id = ? AND channel = ?`,
				r.Note, r.AlertID, channel)
		case store.DeliveryRetrying:
			_, err = tx.ExecContext(ctx, `UPDATE alert_delivery SET state = 'retrying', attempts = attempts + 1, next_at = ?,
				last_error = ? WHERE event_id = ? AND channel = ?`, r.NextAt.UnixMilli(), r.Error, r.AlertID, channel)
		default:
			err = fmt.Errorf("unknown state %q", r.State)
		}
		if err != nil {
			return fmt.Errorf("store: mark deliveries: %w", err)
		}
	}
	return tx.Commit()
}

// Alerts returns the newest alerts matching f, with their deliveries.
func (db *DB) Alerts(ctx context.Context, f store.AlertFilter) ([]store.Alert, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 200
	}
	var where []string
	var args []any
	if f.Kind != "" {
		where, args = append(where, "kind = ?"), append(args, f.Kind)
	}
	if f.Instance != "" {
		where, args = append(where, "instance = ? COLLATE NOCASE"), append(args, store.InstanceName(f.Instance))
	}
	if f.State != "" {
		where, args = append(where, "id IN (SELECT event_id FROM alert_delivery WHERE state = ?)"), append(args, f.State)
	}
	q := `SELECT ` + alertColumns + ` FROM alert_event`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY id DESC LIMIT ?"
	as, err := scanAlerts(db.read.QueryContext(ctx, q, append(args, limit)...))
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
	rows, err := db.read.QueryContext(ctx, `SELECT event_id, channel, mode, state, attempts, next_at, last_error, sent_at, note
		FROM alert_delivery WHERE event_id BETWEEN ? AND ? ORDER BY event_id, channel`, as[len(as)-1].ID, as[0].ID)
	if err != nil {
		return nil, fmt.Errorf("store: alerts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, next int64
		var sent sql.NullInt64
		var d store.AlertDelivery
		if err := rows.Scan(&id, &d.Channel, &d.Mode, &d.State, &d.Attempts, &next, &d.LastError, &sent, &d.Note); err != nil {
			return nil, fmt.Errorf("store: alerts: %w", err)
		}
		i, ok := idx[id]
		if !ok {
			continue
		}
		d.NextAt = time.UnixMilli(next).UTC()
		if sent.Valid {
			t := time.UnixMilli(sent.Int64).UTC()
			d.SentAt = &t
		}
		as[i].Deliveries = append(as[i].Deliveries, d)
	}
	return as, rows.Err()
}

// AckAlert acknowledges the alert with id or key ref: who and why are kept,
// and its deliveries not yet sent are held back (silenced).
func (db *DB) AckAlert(ctx context.Context, ref, by, why string) (store.Alert, error) {
	if strings.TrimSpace(by) == "" || strings.TrimSpace(why) == "" {
		return store.Alert{}, store.Errorf(store.EINVALID, "acknowledge: say who and why")
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return store.Alert{}, fmt.Errorf("store: acknowledge alert: %w", err)
	}
	defer tx.Rollback()
	as, err := scanAlerts(tx.QueryContext(ctx, `SELECT `+alertColumns+` FROM alert_event WHERE key = ? OR CAST(id AS TEXT) = ?`, ref, ref))
	if err != nil {
		return store.Alert{}, fmt.Errorf("store: acknowledge alert: %w", err)
	}
	if len(as) == 0 {
		return store.Alert{}, store.Errorf(store.ENOTFOUND, "no alert with id or key %q", ref)
	}
	a := as[0]
	now := db.now()
	if _, err := tx.ExecContext(ctx, `UPDATE alert_event SET acked_by = ?, ack_note = ?, acked_at = ? WHERE id = ?`,
		by, why, now.UnixMilli(), a.ID); err != nil {
		return store.Alert{}, fmt.Errorf("store: acknowledge alert: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE alert_delivery SET state = 'silenced', note = ? WHERE event_id = ? AND state IN ('pending', 'retrying')`,
		"acknowledged by "+by, a.ID); err != nil {
		return store.Alert{}, fmt.Errorf("store: acknowledge alert: %w", err)
	}
	a.AckedBy, a.AckNote, a.AckedAt = by, why, &now
	return a, tx.Commit()
}

// AddSilence keeps a silence and returns its id.
func (db *DB) AddSilence(ctx context.Context, s store.AlertSilence) (int64, error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	var id int64
	err := db.write.QueryRowContext(ctx, `INSERT INTO alert_silence (instance, kind, key, created_by, reason, created_at, until_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`, s.Instance, s.Kind, s.Key, s.By, s.Why, db.now().UnixMilli(), s.Until.UnixMilli()).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("store: add silence: %w", err)
	}
	return id, nil
}

// EndSilence ends a silence now (it stays listed as ended).
func (db *DB) EndSilence(ctx context.Context, id int64) error {
	res, err := db.write.ExecContext(ctx, `UPDATE alert_silence SET until_at = MIN(until_at, ?) WHERE id = ?`, db.now().UnixMilli(), id)
	if err != nil {
		return fmt.Errorf("store: end silence: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.Errorf(store.ENOTFOUND, "no silence %d", id)
	}
	return nil
}

// Silences returns the silences that end after since (all of them for the
// zero time), newest first.
func (db *DB) Silences(ctx context.Context, since time.Time) ([]store.AlertSilence, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, instance, kind, key, created_by, reason, created_at, until_at
		FROM alert_silence WHERE until_at > ? ORDER BY id DESC`, since.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("store: silences: %w", err)
	}
	defer rows.Close()
	var out []store.AlertSilence
	for rows.Next() {
		var s store.AlertSilence
		var created, until int64
		if err := rows.Scan(&s.ID, &s.Instance, &s.Kind, &s.Key, &s.By, &s.Why, &created, &until); err != nil {
			return nil, fmt.Errorf("store: silences: %w", err)
		}
		s.Created, s.Until = time.UnixMilli(created).UTC(), time.UnixMilli(until).UTC()
		out = append(out, s)
	}
	return out, rows.Err()
}

// AlertDeliveryCounts counts the deliveries not yet over by state
// (pending, retrying), for /metrics.
func (db *DB) AlertDeliveryCounts(ctx context.Context) (map[string]int64, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT state, COUNT(*) FROM alert_delivery WHERE state IN ('pending', 'retrying') GROUP BY state`)
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
// all over (sent or silenced), with their deliveries, and the silences
// that ended before it; it returns how many alerts it deleted. Alerts
// still due are kept whatever their age: nothing is lost to retention.
func (db *DB) PruneAlerts(ctx context.Context, before time.Time) (int64, error) {
	res, err := db.write.ExecContext(ctx, `DELETE FROM alert_event WHERE created_at < ? AND routed = 1
		AND NOT EXISTS (SELECT 1 FROM alert_delivery d WHERE d.event_id = alert_event.id AND d.state IN ('pending', 'retrying'))`,
		before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("store: prune alerts: %w", err)
	}
	n, _ := res.RowsAffected()
	if _, err := db.write.ExecContext(ctx, `DELETE FROM alert_silence WHERE until_at < ?`, before.UnixMilli()); err != nil {
		return n, fmt.Errorf("store: prune silences: %w", err)
	}
	return n, nil
}

const alertColumns = `id, body, created_at, routed, acked_by, ack_note, acked_at`

func alertColumnsOf(t string) string {
	return t + ".id, " + t + ".body, " + t + ".created_at, " + t + ".routed, " + t + ".acked_by, " + t + ".ack_note, " + t + ".acked_at"
}

// scanAlert scans one row of alertColumns, then extra.
func scanAlert(sc interface{ Scan(...any) error }, extra ...any) (store.Alert, error) {
	var a store.Alert
	var body string
	var created int64
	var acked sql.NullInt64
	if err := sc.Scan(append([]any{&a.ID, &body, &created, &a.Routed, &a.AckedBy, &a.AckNote, &acked}, extra...)...); err != nil {
		return a, err
	}
	if err := json.Unmarshal([]byte(body), &a.AlertEvent); err != nil {
		return a, fmt.Errorf("alert %d: %w", a.ID, err)
	}
	a.Created = time.UnixMilli(created).UTC()
	if acked.Valid {
		t := time.UnixMilli(acked.Int64).UTC()
		a.AckedAt = &t
	}
	return a, nil
}

func scanAlerts(rows *sql.Rows, err error) ([]store.Alert, error) {
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
