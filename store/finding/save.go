package finding

import (
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/human"
)

// What saving an instance's findings writes, decided the same way on every
// engine: each engine reads what it stores, asks these, and runs the
// writes in the findings' transaction.

// SeriesKey names one series of an instance.
type SeriesKey struct{ Database, Kind string }

// StoredSeries is a series row as stored, with its id.
type StoredSeries struct {
	ID  int64
	Row SeriesRow
}

// SeriesWrites says how to make the stored series rows equal series: the
// ids to delete, then the positions in series to insert. A changed row is
// written as a new row rather than updated in place, and a save that
// changed none renews one row: DataVersion, which the dashboard's cache
// keys on, reads MAX(series.id), so every save (and so every analysis run,
// which also refreshes regressions' last_seen) moves it, as when every row
// was rewritten.
func SeriesWrites(stored map[SeriesKey]StoredSeries, series []store.Series) (deletes []int64, inserts []int) {
	left := make(map[SeriesKey]StoredSeries, len(stored))
	for k, s := range stored {
		left[k] = s
	}
	renew, renewID := -1, int64(0)
	for i := range series {
		k := SeriesKey{series[i].Database, string(series[i].Kind)}
		o, ok := left[k]
		delete(left, k)
		if ok && o.Row == NewSeriesRow(&series[i]) {
			if renew < 0 {
				renew, renewID = i, o.ID
			}
			continue
		}
		if ok {
			deletes = append(deletes, o.ID)
		}
		inserts = append(inserts, i)
	}
	for _, o := range left {
		deletes = append(deletes, o.ID)
	}
	if len(inserts) == 0 && renew >= 0 {
		deletes, inserts = append(deletes, renewID), []int{renew}
	}
	return deletes, inserts
}

// OpenWatch is a watch stored open.
type OpenWatch struct {
	ID, Restore          int64
	Database, Kind       string
	Direction            string
	OpenedAt             int64 // UTC ms
	Ratio, DurationRatio float64
}

// EndedWatch is an open watch to end: its new state and note, and the
// alert to queue (nil for a confirmed watch, which its regression's alert
// tells).
type EndedWatch struct {
	ID          int64
	State, Note string
	Alert       *store.AlertEvent
}

// OpenedWatch is a watch to open (or open again) on a series, with its
// alert.
type OpenedWatch struct {
	SeriesKey
	Watch *store.Watch
	Alert store.AlertEvent
}

// WatchWrites says how to make instance inst's open watches those of
// series (issue 37): a series watched from a new restore opens a watch; an
// open watch whose series no longer shows it is confirmed, when a
// regression of regs is dated to its restore, or closed (WatchEnd). Closed
// and confirmed watches stay as history.
func WatchWrites(inst string, open []OpenWatch, series []store.Series, regs []store.Regression) (ends []EndedWatch, opens []OpenedWatch) {
	confirmed := map[SeriesKey]int64{} // the restore each series' regression is dated to
	for _, r := range regs {
		confirmed[SeriesKey{r.Database, string(r.Kind)}] = r.ChangeRestoreID
	}
	want := map[SeriesKey]*store.Watch{}
	var order []SeriesKey
	for i := range series {
		if w := series[i].Watch; w != nil {
			k := SeriesKey{series[i].Database, string(series[i].Kind)}
			want[k] = w
			order = append(order, k)
		}
	}
	for _, o := range open {
		k := SeriesKey{o.Database, o.Kind}
		if w := want[k]; w != nil && w.RestoreID == o.Restore {
			delete(want, k) // still open, as it was
			continue
		}
		e := EndedWatch{ID: o.ID}
		e.State, e.Note = WatchEnd(o.Direction, confirmed[k] == o.Restore, want[k] != nil)
		if e.State == store.WatchClosed {
			w := store.Watch{Instance: inst, Database: o.Database, Kind: store.Kind(o.Kind), Direction: o.Direction,
				RestoreID: o.Restore, OpenedAt: store.UnixMs(o.OpenedAt), Ratio: o.Ratio, DurationRatio: o.DurationRatio, State: e.State}
			a := WatchEvent(store.AlertWatchClosed, inst, o.Database, w.Kind, w.Direction, w.RestoreID, w.OpenedAt, w.Ratio, human.WatchLine(&w))
			e.Alert = &a
		}
		ends = append(ends, e)
	}
	for _, k := range order {
		w := want[k]
		if w == nil {
			continue
		}
		line := *w
		line.Instance, line.State = inst, store.WatchOpen
		opens = append(opens, OpenedWatch{SeriesKey: k, Watch: w,
			Alert: WatchEvent(store.AlertWatchOpened, inst, k.Database, store.Kind(k.Kind), w.Direction, w.RestoreID, w.OpenedAt,
				w.Ratio, human.WatchLine(&line))})
	}
	return ends, opens
}
