package store

// The one way restores are read by a filter: lists, pages, the API's
// keyset pages, exports and the CLI all call DB.Restores.

import (
	"context"
	"time"
)

// RestoreQuery is a filter and the shape of its answer.
type RestoreQuery struct {
	Filter RestoreFilter
	// Series orders by series (instance, database, kind, time, id) instead
	// of Filter.Sort, and pages by keyset: After is the id of the last
	// restore of the previous page (0: from the first), each page an index
	// seek on restore_series however deep. Nothing is counted.
	Series bool
	After  int64
	// CountCap bounds the count of a list's matches (0: count them all).
	CountCap int
	// Each, when set, receives every match (Filter.Limit and Offset apply)
	// in the query's order, streamed, instead of a page.
	Each func(*Restore) error
	// Orders, when set, supplies the fleet's in-memory orders (a cached
	// DB.RestoreOrders): the pages they serve (RestoreFilter.Fleetwide) are
	// answered from them, the rest in SQL. The answer is the same either
	// way; the orders spare a scan of the table when no index orders the
	// fleet (since migration 0013).
	Orders func(context.Context) (OrderedPages, error)
	// Heads, when set with Orders, supplies the heads of the fleet's
	// orders (a cached DB.LoadOrderHeads, nil when there are none): a
	// page they answer (OrderHeads.Answers) is answered from them, not
	// from Orders. A server sets it while it loads the orders, which at
	// 10 M restores takes seconds.
	Heads func(context.Context) (OrderHeads, error)
}

// Pages is what answers q's fleet-wide page f (q.Filter as an engine
// normalized it): the heads of the orders when they answer it, else the
// orders. Heads that cannot be read are passed over: the orders answer the
// same. Every engine's Restores reads a fleet-wide page through it.
func (q RestoreQuery) Pages(ctx context.Context, f RestoreFilter) (OrderedPages, error) {
	if q.Heads != nil && f.Plain() {
		if h, err := q.Heads(ctx); err == nil && h != nil && h.Answers(f, q.CountCap) {
			return h, nil
		}
	}
	return q.Orders(ctx)
}

// OrderedPages is an in-memory order of the fleet's restores that answers a
// list's page without a scan of the table (RestoreOrders is the one there
// is).
type OrderedPages interface {
	Page(f RestoreFilter, countCap int) (ids []int64, total int, exact bool)
}

// RestorePage is one page of restores and how many matched.
type RestorePage struct {
	Restores []Restore
	// Total is how many restores match without Limit and Offset, counted up
	// to CountCap (Exact says whether the count is whole); zero for Series
	// and Each queries, which do not count.
	Total int
	Exact bool
}

// The other facts a restore plan reads: the measured restores its expected
// durations rest on, the instance's tags (its RTO target) and the folders
// its databases' files live in.

// RestoreRate is one measured restore as a plan's duration estimate uses
// it: its series (instance, database, kind), device kind, throughput,
// buffer settings, size and duration.
type RestoreRate struct {
	ID             int64
	Instance       string
	Database       string
	Kind           Kind
	DeviceKind     string
	LogicalMiBps   float64
	ReadMiBps      float64 // 0 = unknown
	BufferCount    int64   // 0 = unknown
	MaxTransferKiB int64   // 0 = unknown
	Bytes          int64   // logical backup size; 0 = unknown
	DurationS      float64 // 0 = unknown
	At             time.Time
}
