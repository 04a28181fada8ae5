// Package finding holds what the analysis' findings say when the warehouse
// saves them, the same on every engine: the alerts a regression confirmed
// or resolved and a watch opened or closed queue in the findings'
// transaction, and the words a closed watch keeps.
package finding

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/human"
)

// RegressionConfirmed is the alert of regression id, just found for r on
// instance inst. Its key names the series, the direction and the change's
// instant, so the same change found again is the same alert.
func RegressionConfirmed(inst string, id int64, r *store.Regression) store.AlertEvent {
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
	return e
}

// Resolved is a regression the analysis no longer finds, as stored, and the
// alert of its confirmation if one was queued (ConfirmedKey "" if none).
type Resolved struct {
	ID                              int64
	Instance, Database, Kind, Dir   string
	ChangedMs                       int64
	Ratio                           float64
	ConfirmedKey, ConfirmedSeverity string
}

// RegressionResolved is the alert of a regression resolved at now; keyed by
// the regression's id, it is sent once. A receiver that keeps state
// (Alertmanager) ends the confirmation's alert it names.
func RegressionResolved(r Resolved, now time.Time) store.AlertEvent {
	what := kindWords(store.Kind(r.Kind)) + " of " + r.Database + " on " + r.Instance
	fields := map[string]string{"regression_id": strconv.FormatInt(r.ID, 10), "direction": r.Dir}
	if r.ConfirmedKey != "" {
		fields["confirmed_key"], fields["confirmed_severity"] = r.ConfirmedKey, r.ConfirmedSeverity
	}
	return store.AlertEvent{
		Key:  fmt.Sprintf("%s/%s/%s/%s/%s/%d", store.AlertRegressionResolved, r.Instance, r.Database, r.Kind, r.Dir, r.ID),
		Kind: store.AlertRegressionResolved, Severity: store.SeverityInfo, Instance: r.Instance, Database: r.Database, RestoreKind: r.Kind,
		Since: now, Ratio: r.Ratio, Link: "/regressions/" + strconv.FormatInt(r.ID, 10),
		Title: fmt.Sprintf("%s: the change of %s is over", capital(what), human.Date(time.UnixMilli(r.ChangedMs))),
		Summary: fmt.Sprintf("The analysis no longer finds the %s (%s) that began %s.", dirWords(r.Dir), human.Change(r.Ratio),
			human.Stamp(time.UnixMilli(r.ChangedMs))),
		NextStep: "Nothing to do; the evidence page keeps the history.",
		Fields:   fields,
	}
}

// WatchEvent is the alert of a watch opened or closed (kind
// store.AlertWatchOpened or AlertWatchClosed): line is the sentence every
// surface says of the watch. Its key names the series and the watched
// restore, so the same watch is one alert each way. A watch confirmed is
// not alerted: its regression_confirmed alert says it. Watches go to the
// digest by default (store.AlertKinds' defaults in package alert).
func WatchEvent(kind, inst, database string, restoreKind store.Kind, direction string, restoreID int64, since time.Time,
	ratio float64, line string) store.AlertEvent {
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
	return e
}

// WatchEnd is how an open watch ends when its series no longer shows it:
// confirmed when a regression is now dated to its restore, superseded when
// a newer restore opened another, else closed, back to usual.
func WatchEnd(direction string, confirmed, superseded bool) (state, note string) {
	switch {
	case confirmed && direction == "improvement":
		return store.WatchConfirmed, "confirmed: the next restore was beyond the usual too, a speed-up dated to this one"
	case confirmed:
		return store.WatchConfirmed, "confirmed: the next restore was beyond the usual too, a regression dated to this one"
	case superseded:
		return store.WatchClosed, "superseded: a newer restore opened another watch"
	}
	return store.WatchClosed, "back to usual: the next restore was within the series' usual range"
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
