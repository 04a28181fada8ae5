package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/human"
)

// The alerts saveRegressions queues: a regression confirmed (a new row) and
// one resolved, in the transaction that saves them.

// enqueueRegressionConfirmed queues the alert of regression id, just
// inserted for r on instanceID. Its key names the series, the direction and
// the change's instant, so the same change found again is the same alert.
func enqueueRegressionConfirmed(ctx context.Context, tx *sql.Tx, instanceID, id int64, r *store.Regression) error {
	inst, err := instanceNameTx(ctx, tx, instanceID)
	if err != nil {
		return err
	}
	e := store.AlertEvent{
		Key: fmt.Sprintf("%s/%s/%s/%s/%s/%d", store.AlertRegressionConfirmed, inst, r.Database, r.Kind, r.Direction,
			r.ChangedAt.Unix()),
		Kind: store.AlertRegressionConfirmed, Instance: inst, Database: r.Database, RestoreKind: string(r.Kind),
		Since: r.ChangedAt, Ratio: r.Ratio, Link: "/regressions/" + strconv.FormatInt(id, 10),
		Fields: map[string]string{"regression_id": strconv.FormatInt(id, 10), "direction": r.Direction,
			"baseline_mibps": fmt.Sprintf("%.1f", r.BaselineMiBps), "current_mibps": fmt.Sprintf("%.1f", r.CurrentMiBps)},
	}
	what := kindWords(r.Kind) + " of " + r.Database + " on " + inst
	since := human.Stamp(r.ChangedAt)
	if r.Direction == "improvement" {
		// A speed-up is worth knowing (a fix that worked) but wakes no one.
		e.Severity = store.SeverityInfo
		e.Title = fmt.Sprintf("%s %s since %s", capital(what), human.Change(r.Ratio), since)
		e.NextStep = "Nothing to do; note what changed (evidence page) so it is kept."
	} else {
		e.Severity = store.SeverityWarning
		if r.Ratio > 0 && r.Ratio <= 0.5 {
			e.Severity = store.SeverityCritical
		}
		e.Title = fmt.Sprintf("%s %s since %s", capital(what), human.Change(r.Ratio), since)
		e.NextStep = regressionNextStep(r)
	}
	e.Summary = fmt.Sprintf("Median %s before, %s since (%s, most likely %s; %d restores before, %d since).",
		human.MiBps(r.BaselineMiBps), human.MiBps(r.CurrentMiBps), human.Change(r.Ratio), human.ChangeRange(r.RatioLow, r.RatioHigh), r.BaselineN, r.CurrentN)
	if h := r.HoursLostPerYear(); h > 0 {
		e.Summary += fmt.Sprintf(" About %s lost a year.", human.Hours(h))
	}
	return enqueueAlert(ctx, tx, e)
}

// enqueueRegressionResolved queues the alert of regression id, which the
// analysis no longer finds; keyed by the regression's id, it is sent once.
func enqueueRegressionResolved(ctx context.Context, tx *sql.Tx, id int64, now time.Time) error {
	var inst, db, kind, dir string
	var changed int64
	var ratio float64
	if err := tx.QueryRowContext(ctx, `SELECT i.name, r.database_name, r.kind, r.direction, r.changed_at, r.ratio
		FROM regression r JOIN instance i ON i.id = r.instance_id WHERE r.id = ?`, id).Scan(&inst, &db, &kind, &dir, &changed, &ratio); err != nil {
		return fmt.Errorf("store: resolved regression %d: %w", id, err)
	}
	what := kindWords(store.Kind(kind)) + " of " + db + " on " + inst
	fields := map[string]string{"regression_id": strconv.FormatInt(id, 10), "direction": dir}
	// The alert of its confirmation, if queued: a receiver that keeps
	// state (Alertmanager) ends that very alert.
	var ckey, csev string
	err := tx.QueryRowContext(ctx, `SELECT key, severity FROM alert_event WHERE kind = ? AND instance = ? AND database_name = ?
		AND json_extract(body, '$.fields.regression_id') = ? ORDER BY id DESC LIMIT 1`,
		store.AlertRegressionConfirmed, inst, db, strconv.FormatInt(id, 10)).Scan(&ckey, &csev)
	switch {
	case err == nil:
		fields["confirmed_key"], fields["confirmed_severity"] = ckey, csev
	case err != sql.ErrNoRows:
		return fmt.Errorf("store: resolved regression %d: %w", id, err)
	}
	e := store.AlertEvent{
		Key:  fmt.Sprintf("%s/%s/%s/%s/%s/%d", store.AlertRegressionResolved, inst, db, kind, dir, id),
		Kind: store.AlertRegressionResolved, Severity: store.SeverityInfo, Instance: inst, Database: db, RestoreKind: kind,
		Since: now, Ratio: ratio, Link: "/regressions/" + strconv.FormatInt(id, 10),
		Title: fmt.Sprintf("%s: the change of %s is over", capital(what), human.Date(time.UnixMilli(changed))),
		Summary: fmt.Sprintf("The analysis no longer finds the %s (%s) that began %s.", dirWords(dir), human.Change(ratio),
			human.Stamp(time.UnixMilli(changed))),
		NextStep: "Nothing to do; the evidence page keeps the history.",
		Fields:   fields,
	}
	return enqueueAlert(ctx, tx, e)
}

func instanceNameTx(ctx context.Context, tx *sql.Tx, id int64) (string, error) {
	var name string
	if err := tx.QueryRowContext(ctx, `SELECT name FROM instance WHERE id = ?`, id).Scan(&name); err != nil {
		return "", fmt.Errorf("store: instance %d: %w", id, err)
	}
	return name, nil
}

// regressionNextStep says what to look at first: what changed at the
// change point, else a known issue, else the evidence page's checks.
func regressionNextStep(r *store.Regression) string {
	if len(r.ChangedFactors) > 0 {
		f := r.ChangedFactors[0]
		return fmt.Sprintf("%s changed from %s to %s at that moment: check it first (evidence page).",
			human.FactorLabel(f.Factor), human.FactorValue(f.Factor, f.Before), human.FactorValue(f.Factor, f.After))
	}
	if len(r.KnownIssues) > 0 {
		return "Matches known issue " + strings.Join(r.KnownIssues, ", ") + ": see its fix builds on the evidence page."
	}
	return "No recorded factor changed: run the next steps on the evidence page (share latency, filter drivers, IFI, VLFs)."
}

func kindWords(k store.Kind) string {
	switch k {
	case store.KindFull:
		return "full restores"
	case store.KindDiff:
		return "differential restores"
	case store.KindLog:
		return "log restores"
	}
	return string(k) + " restores"
}

func dirWords(dir string) string {
	if dir == "improvement" {
		return "speed-up"
	}
	return "slowdown"
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// enqueueWatchAlert queues the alert of a watch opened or closed (kind
// store.AlertWatchOpened or AlertWatchClosed), for the watch-saving code
// to call in the findings' transaction: line is the sentence every surface
// says of the watch. Its key names the series and the watched restore, so
// the same watch is one alert each way. A watch confirmed is not alerted
// here: its regression_confirmed alert says it. Watches go to the digest
// by default (store.AlertKinds' defaults in package alert).
func enqueueWatchAlert(ctx context.Context, tx *sql.Tx, kind string, instanceID int64, database string, restoreKind store.Kind,
	direction string, restoreID int64, since time.Time, ratio float64, line string) error {
	inst, err := instanceNameTx(ctx, tx, instanceID)
	if err != nil {
		return err
	}
	e := store.AlertEvent{Key: fmt.Sprintf("%s/%s/%s/%s/%d", kind, inst, database, restoreKind, restoreID), Kind: kind,
		Severity: store.SeverityInfo, Instance: inst, Database: database, RestoreKind: string(restoreKind), Since: since, Ratio: ratio,
		Title: line, Link: "/restores/" + strconv.FormatInt(restoreID, 10),
		Fields: map[string]string{"restore_id": strconv.FormatInt(restoreID, 10), "direction": direction}}
	if kind == store.AlertWatchOpened {
		e.Summary = "One restore beyond the series' usual range: the next one confirms a regression or closes the watch."
		e.NextStep = "Nothing yet; if the restore was known to be unusual (a larger database, a busy share), note it."
	} else {
		e.Summary = "The next restore was within the series' usual range: no regression."
		e.NextStep = "Nothing to do."
	}
	return enqueueAlert(ctx, tx, e)
}
