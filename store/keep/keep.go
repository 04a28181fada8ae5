// Package keep computes the dashboard's fleet-wide aggregates — the
// restores' orders, the build cohorts and the overview's figures drawn from
// the orders — and keeps them in the warehouse under the data version they
// were computed at (issue 42). Whoever changes the data calls Refresh (the
// CLI's import, analyze and demo, collect --once after a pass; collect and
// serve every few minutes when the data moved), so the first page a server
// shows after them reads what is kept instead of every restore; the server
// itself recomputes only when what is kept is behind (changes it made, or a
// warehouse older than this package), answering from the kept copy
// meanwhile.
//
// The package knows no templates: its values are the figures a view is
// made from, in the units the store gives them.
package keep

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
)

// Names of the aggregates this package keeps (store.Aggregate.Name).
const (
	NameCohorts   = "cohorts"
	NameFigures   = "figures"
	NameRTO       = "rto-candidates"
	NameInstances = "instances"
)

// format changes when what is kept changes meaning: a value of another
// format is not read.
const format = "keep/1"

// Period is the span the overview compares with the one before it, and
// TrendWeeks how far back its throughput sparkline reaches.
const (
	Period     = 30 * 24 * time.Hour
	TrendWeeks = 26
)

// OrdersLag is how many restore changes the kept orders may be behind the
// warehouse before Refresh saves them again: a server's start brings them
// up to date from the change log, which costs what changed.
const OrdersLag = 20_000

// Warehouse is what Refresh reads and writes; *sqlite.DB satisfies it.
type Warehouse interface {
	DataVersion(ctx context.Context) (string, error)
	LoadOrders(ctx context.Context) (store.FleetOrders, error)
	LoadOrderHeads(ctx context.Context) (store.OrderHeads, error)
	UpdateOrders(ctx context.Context, old store.FleetOrders) (store.FleetOrders, error)
	SaveOrders(ctx context.Context, o store.FleetOrders) error
	RelativeByBuild(ctx context.Context) (byInstance, bySource map[string][]float64, measured int, err error)
	RTOCandidates(ctx context.Context) ([]store.RTOCandidate, error)
	ListInstances(ctx context.Context, name string) ([]store.InstanceSummary, error)
	Aggregates(ctx context.Context) ([]store.Aggregate, error)
	SaveAggregate(ctx context.Context, a store.Aggregate) error
}

// Version is the version an aggregate is kept under: the release that
// computed it (another release's is not read) and the data version,
// apart by Sep.
func Version(release, dataVersion string) string {
	return format + "/" + release + Sep + dataVersion
}

// Sep parts a kept aggregate's version: a character no release or data
// version holds, and one every engine's text stores (PostgreSQL refuses
// NUL in text: a version with one could not be migrated there).
const Sep = "\x1f"

// DataVersionOf returns the data version of an aggregate kept under
// Version(release, …), and false when it was kept by another release or
// format.
func DataVersionOf(release, version string) (string, bool) {
	own, data, ok := strings.Cut(version, Sep)
	return data, ok && own == format+"/"+release
}

// Cohorts are the build cohorts: every measured restore's throughput
// relative to its series' baseline, grouped by the build of the instance
// that restored and by the build of the backup's source.
type Cohorts struct {
	Instance, Source []analysis.Cohort
	Measured         int
	// Seq is the position in the restore change log the cohorts were
	// computed at (0: unknown): how far behind kept cohorts are.
	Seq int64
}

// CohortsOf reads every measured restore and summarises its cohorts.
func CohortsOf(ctx context.Context, w interface {
	RelativeByBuild(ctx context.Context) (map[string][]float64, map[string][]float64, int, error)
}) (Cohorts, error) {
	byInst, bySrc, measured, err := w.RelativeByBuild(ctx)
	if err != nil {
		return Cohorts{}, err
	}
	return Cohorts{Instance: analysis.CohortsOf(byInst), Source: analysis.CohortsOf(bySrc), Measured: measured}, nil
}

// RTO are the overview's candidates for its RTO projections (every
// database's newest full restore and the differential and log bytes
// after it): a read of every log restore since each full.
type RTO struct {
	Candidates []store.RTOCandidate
}

// Instances are every instance's summary (the instance list, the builds
// page's counts).
type Instances struct {
	List []store.InstanceSummary
}

// DecodeInstances reads kept Instances as the store returns them (tags
// never nil).
func DecodeInstances(body []byte) ([]store.InstanceSummary, error) {
	var k Instances
	if err := Decode(body, &k); err != nil {
		return nil, err
	}
	for i := range k.List {
		if k.List[i].Tags == nil {
			k.List[i].Tags = map[string]string{}
		}
	}
	return k.List, nil
}

// Figures are the overview's figures drawn from the fleet's orders.
type Figures struct {
	Empty bool // no restore
	// End ends "this period": just after the newest restore (a warehouse
	// of old logs still has a meaningful period), or the time of the
	// computation when that is earlier.
	End                    time.Time
	Last                   time.Time // the newest restore's time
	Restores, RestoresPrev int64     // finished in the Period to End, and in the one before
	Weeks                  []float64 // weekly median full-restore throughput (MiB/s), TrendWeeks to End; NaN: none
}

// FiguresOf computes the figures from the orders at now.
//
// Figures are the same at any later time when their End is just after
// Last (Settled): a reader whose clock is earlier computes its own.
func FiguresOf(o store.FleetOrders, now time.Time) Figures {
	_, last := o.Span()
	if last.IsZero() {
		return Figures{Empty: true}
	}
	end := last.Add(time.Millisecond)
	if now.Before(end) {
		end = now
	}
	from := end.Add(-TrendWeeks * 7 * 24 * time.Hour)
	return Figures{
		End: end, Last: last,
		Restores:     o.Count(end.Add(-Period), end),
		RestoresPrev: o.Count(end.Add(-2*Period), end.Add(-Period)),
		Weeks:        analysis.WeeklyMedians(o.Throughputs(store.KindFull, from, end), end, TrendWeeks),
	}
}

// Settled reports whether f is the same at any time from now on: its period
// ends at its newest restore, not at the clock.
func (f Figures) Settled() bool { return f.Empty || f.End.Equal(f.Last.Add(time.Millisecond)) }

// Encode and Decode are the kept bodies' encoding.
func Encode(v any) ([]byte, error) {
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(v)
	return b.Bytes(), err
}

// Decode reads a body Encode wrote into v (a pointer).
func Decode(body []byte, v any) error {
	return gob.NewDecoder(bytes.NewReader(body)).Decode(v)
}

// Kept returns the aggregate kept under name by release at dataVersion,
// and false when none is (none kept, another release's, or one of another
// version).
func Kept(ctx context.Context, w interface {
	Aggregates(ctx context.Context) ([]store.Aggregate, error)
}, name, release, dataVersion string) (store.Aggregate, bool, error) {
	aggs, err := w.Aggregates(ctx)
	if err != nil {
		return store.Aggregate{}, false, err
	}
	for _, a := range aggs {
		if a.Name != name {
			continue
		}
		v, ok := DataVersionOf(release, a.Version)
		return a, ok && v == dataVersion, nil
	}
	return store.Aggregate{}, false, nil
}

// CohortsShare is the share of the restores that must have changed since
// the kept cohorts were computed for an import's Refresh to compute them
// again (they read every measured restore: 6 s at 3 M, tens at 10 M). Below
// it the kept cohorts stay, a version behind, and a server shows them while
// it computes the current ones in the background.
const CohortsShare = 0.05

// headsKept reports whether the orders' snapshot has heads a server reads
// (store.OrderHeads): one saved by an older release has none, and a
// server would wait for the whole snapshot to load for the restores
// list's first page.
func headsKept(ctx context.Context, w Warehouse) bool {
	h, err := w.LoadOrderHeads(ctx)
	return err == nil && h != nil
}

// Refreshed says what Refresh did.
type Refreshed struct {
	Version     string        // the data version kept; empty when the data moved meanwhile
	OrdersSaved bool          // the orders' snapshot was written
	CohortsKept bool          // the cohorts were computed and kept (see CohortsShare)
	Orders      time.Duration // loading and updating the orders
	Cohorts     time.Duration // reading every measured restore for the cohorts
	RTO         time.Duration // reading the RTO projections' candidates
	Instances   time.Duration // reading every instance's summary
	Save        time.Duration // writing what is kept
}

// Refresh brings what is kept up to date with the warehouse: the orders
// (loaded from their snapshot and updated from the change log, or read
// from every restore when there is none), saved again when they were read
// whole or are OrdersLag changes or more ahead of the snapshot (or its
// heads cannot be read); the
// figures drawn from them; the RTO projections' candidates; the instance
// list; and the cohorts when all is set (analyze: every series was judged
// again), when none are kept, or when CohortsShare of the restores or more
// changed since they were. It keeps nothing when the data changed while it
// computed (a server that imports meanwhile keeps its own). release is the
// program's version (Config.Version of the server).
func Refresh(ctx context.Context, w Warehouse, release string, now time.Time, all bool) (Refreshed, error) {
	var r Refreshed
	before, err := w.DataVersion(ctx)
	if err != nil {
		return r, err
	}
	var keptCohorts Cohorts
	haveCohorts := false
	if a, _, err := Kept(ctx, w, NameCohorts, release, ""); err == nil && a.Name != "" {
		_, mine := DataVersionOf(release, a.Version)
		haveCohorts = mine && Decode(a.Body, &keptCohorts) == nil && keptCohorts.Seq > 0
	}
	// The cohorts and the orders read apart (the read pool): on two cores
	// they take the longer one's time, not the sum. An import's cohorts
	// wait for the orders: whether to read them depends on what changed.
	var cohorts Cohorts
	var rto RTO
	var cerr error
	readCohorts := func() {
		start := time.Now()
		if cohorts, cerr = CohortsOf(ctx, w); cerr != nil {
			cerr = fmt.Errorf("keep: cohorts: %w", cerr)
			return
		}
		r.Cohorts, r.CohortsKept = time.Since(start), true
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if all || !haveCohorts {
			if readCohorts(); cerr != nil {
				return
			}
		}
		start := time.Now()
		if rto.Candidates, cerr = w.RTOCandidates(ctx); cerr != nil {
			cerr = fmt.Errorf("keep: %w", cerr)
		}
		r.RTO = time.Since(start)
	}()
	var insts Instances
	start := time.Now()
	insts.List, err = w.ListInstances(ctx, "")
	if err != nil {
		<-done
		return r, fmt.Errorf("keep: %w", err)
	}
	r.Instances = time.Since(start)
	start = time.Now()
	kept, err := w.LoadOrders(ctx)
	if err != nil {
		kept = nil // unreadable: read every restore instead
	}
	o, err := w.UpdateOrders(ctx, kept)
	r.Orders = time.Since(start)
	<-done
	if err != nil {
		return r, fmt.Errorf("keep: orders: %w", err)
	}
	if cerr != nil {
		return r, cerr
	}
	if !r.CohortsKept {
		restores := o.Count(time.Time{}, time.Unix(1<<40, 0))
		if float64(o.OrdersSeq()-keptCohorts.Seq) >= CohortsShare*float64(restores) {
			if readCohorts(); cerr != nil {
				return r, cerr
			}
		}
	}
	cohorts.Seq = o.OrdersSeq()
	figures := FiguresOf(o, now)
	ordersTook := r.Orders
	after, err := w.DataVersion(ctx)
	if err != nil || after != before {
		return r, err
	}
	start = time.Now()
	if kept == nil || o.Scanned() || o.OrdersSeq()-kept.OrdersSeq() >= OrdersLag || !headsKept(ctx, w) {
		if err := w.SaveOrders(ctx, o); err != nil {
			return r, fmt.Errorf("keep: %w", err)
		}
		r.OrdersSaved = true
	}
	type value struct {
		name string
		v    any
		took time.Duration
	}
	values := []value{{NameFigures, figures, ordersTook}, {NameRTO, rto, r.RTO}, {NameInstances, insts, r.Instances}}
	if r.CohortsKept {
		values = append(values, value{NameCohorts, cohorts, r.Cohorts})
	}
	for _, a := range values {
		body, err := Encode(a.v)
		if err != nil {
			return r, fmt.Errorf("keep: %s: %w", a.name, err)
		}
		if err := w.SaveAggregate(ctx, store.Aggregate{Name: a.name, Version: Version(release, after), Took: a.took, Body: body}); err != nil {
			return r, fmt.Errorf("keep: %w", err)
		}
	}
	r.Save, r.Version = time.Since(start), after
	return r, nil
}
