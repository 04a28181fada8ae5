package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/restorewatch/restorewatch/store/derive"
	"github.com/restorewatch/restorewatch/store/row"
)

// rowsPerInsert is how many restores one INSERT statement carries: fewer
// statements cost less than more bound values in modernc's SQLite.
const rowsPerInsert = 20

// maxBuckets bounds how many NULL patterns wait for a full statement at
// once; past it every waiting row is written.
const maxBuckets = 64

// restoreWriter writes derived restores inside one reconciliation
// transaction. A restore derived from a history row alone leaves about half
// of its columns NULL, and binding a NULL costs modernc's SQLite as much as
// binding a value: rows are grouped by which columns are NULL, and each
// group's statement says NULL in those places, so only values are bound.
type restoreWriter struct {
	ctx     context.Context
	tx      *sql.Tx
	stmts   map[uint64]*sql.Stmt // full statements by NULL mask
	buckets map[uint64]*restoreBucket
	// What the transaction changed, for the dashboard's change feed
	// (recordRestoreChanges): natural keys upserted, ids deleted.
	upserted, deleted []int64
	// nextID is the id the next new restore gets. The writer numbers new
	// restores itself, in the order the instances and their restores come:
	// the rowids SQLite would give depend on when buckets of different NULL
	// masks are written, that is on where transactions end (time budgets,
	// the idle timer), and so on the machine's timing. It starts at the
	// table's MAX(id)+1 when that is higher (another process's
	// reconciliation between two batches); 0 = not read yet.
	nextID int64
	idRead bool
}

// newID returns the id of the next new restore.
func (w *restoreWriter) newID() (int64, error) {
	if !w.idRead {
		var next int64
		if err := w.tx.QueryRowContext(w.ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM restore`).Scan(&next); err != nil {
			return 0, err
		}
		w.nextID, w.idRead = max(w.nextID, next), true
	}
	w.nextID++
	return w.nextID - 1, nil
}

// restoreBucket holds rows with the same NULL mask, their non-NULL values
// in row.Cols order.
type restoreBucket struct {
	args []any
	n    int
}

func (w *restoreWriter) close() {
	for _, s := range w.stmts {
		s.Close()
	}
}

// add queues one row, native values (nil for NULL) in row.Cols order
// and its id (nil: an existing restore's, which the upsert keeps), writing
// its group's statement when it is full.
func (w *restoreWriter) add(v []any, id any) error {
	var mask uint64
	for i, x := range v {
		if x == nil {
			mask |= 1 << i
		}
	}
	if id == nil {
		mask |= 1 << len(row.Cols)
	}
	if w.buckets == nil {
		w.buckets = map[uint64]*restoreBucket{}
	}
	b := w.buckets[mask]
	if b == nil {
		if len(w.buckets) >= maxBuckets {
			if err := w.flush(); err != nil {
				return err
			}
		}
		b = &restoreBucket{}
		w.buckets[mask] = b
	}
	for _, x := range v {
		if x != nil {
			b.args = append(b.args, x)
		}
	}
	if id != nil {
		b.args = append(b.args, id)
	}
	if b.n++; b.n < rowsPerInsert {
		return nil
	}
	st := w.stmts[mask]
	if st == nil {
		var err error
		if st, err = w.tx.PrepareContext(w.ctx, upsertSQL(mask, rowsPerInsert)); err != nil {
			return err
		}
		if w.stmts == nil {
			w.stmts = map[uint64]*sql.Stmt{}
		}
		w.stmts[mask] = st
	}
	_, err := st.ExecContext(w.ctx, b.args...)
	b.args, b.n = b.args[:0], 0
	return err
}

// flush writes every queued row, the buckets in the order of their masks
// so that the ids given are the same from run to run.
func (w *restoreWriter) flush() error {
	for _, mask := range slices.Sorted(maps.Keys(w.buckets)) {
		if b := w.buckets[mask]; b.n > 0 {
			if _, err := w.tx.ExecContext(w.ctx, upsertSQL(mask, b.n), b.args...); err != nil {
				return fmt.Errorf("write restores: %w", err)
			}
		}
		delete(w.buckets, mask)
	}
	return nil
}

// staleRestore is a stored restore that a derivation no longer produces.
type staleRestore struct{ key, id int64 }

// diffRestores compares an instance's derivation out, whose restores
// anchored at or after from (wholeInstance: all of them, see window.go)
// replace the stored ones, with what q's snapshot stores: it returns the
// positions in out.Restores of the new and changed rows (same natural key,
// another content hash), beside them whether each is new, and the stored
// restores no longer derived. It runs
// on the deriving goroutine, in the snapshot the facts were read from; the
// writer applies the result only if no one wrote the instance's restores
// since (instance.derived).
func diffRestores(ctx context.Context, q querier, instanceID int64, out *derive.Instance, from int64) (changed []int, fresh []bool, stale []staleRestore, err error) {
	type stored struct{ id, hash int64 }
	existing := map[int64]stored{} // by natural_key
	query, args := `SELECT natural_key, content_hash, id, restore_date_local, finished_local FROM restore WHERE instance_id = ?`, []any{instanceID}
	if from != wholeInstance {
		// A restore's time is at most a day (its time zone) before its
		// anchor.
		query, args = query+` AND at_utc >= ?`, append(args, from-2*dayMS)
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, nil, err
	}
	for rows.Next() {
		var k, h, id int64
		var rd, fin sql.NullInt64
		if err := rows.Scan(&k, &h, &id, &rd, &fin); err != nil {
			rows.Close()
			return nil, nil, nil, err
		}
		if from == wholeInstance || anchor(rd, fin) >= from {
			existing[k] = stored{id, h}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, nil, err
	}
	for i := range out.Restores {
		d := &out.Restores[i]
		e, ok := existing[d.Key]
		delete(existing, d.Key)
		if ok && e.hash == d.Row[2].(int64) {
			continue // unchanged: no write
		}
		changed, fresh = append(changed, i), append(fresh, !ok)
	}
	for k, e := range existing {
		stale = append(stale, staleRestore{k, e.id})
	}
	slices.SortFunc(stale, func(a, b staleRestore) int { return cmp.Compare(a.key, b.key) })
	return changed, fresh, stale, nil
}

// apply writes what diffRestores found for d: its new and changed rows
// are upserted by natural key (a restore keeps its id when its facts
// change), its stale restores deleted. The rows wait in their buckets,
// with other instances' rows, until a statement is full or the
// transaction's writer flushes: an instance of a day's import has about
// ten, and a statement of ten rows of one NULL pattern or another was
// compiled afresh for nearly every instance. Holding them is safe because
// natural keys are fact ids, unique across instances: what this instance
// deletes is never another's waiting row.
func (w *restoreWriter) apply(d *derivedInstance) error {
	for j, i := range d.changed {
		r := &d.out.Restores[i]
		w.upserted = append(w.upserted, r.Key)
		var id any
		if d.fresh[j] {
			n, err := w.newID()
			if err != nil {
				return fmt.Errorf("write restores: %w", err)
			}
			id = n
		}
		if err := w.add(r.Row, id); err != nil {
			return fmt.Errorf("write restores: %w", err)
		}
	}
	for _, s := range d.stale {
		if _, err := w.tx.ExecContext(w.ctx, `DELETE FROM restore WHERE natural_key = ?`, s.key); err != nil {
			return fmt.Errorf("delete stale restore: %w", err)
		}
		w.deleted = append(w.deleted, s.id)
	}
	return nil
}

// native replaces v's pointers by what they point to, nil pointers by nil,
// in place: database/sql converts pointers by reflection, value by value.
func native(v []any) []any {
	for i, x := range v {
		switch x := x.(type) {
		case *float64:
			if x == nil {
				v[i] = nil
			} else {
				v[i] = *x
			}
		case *int64:
			if x == nil {
				v[i] = nil
			} else {
				v[i] = *x
			}
		case *bool:
			if x == nil {
				v[i] = nil
			} else {
				v[i] = *x
			}
		case int:
			v[i] = int64(x)
		}
	}
	return v
}

type upsertKey struct {
	mask uint64
	n    int
}

var upsertCache sync.Map // upsertKey -> statement text

// upsertSQL builds an upsert of n rows keyed by natural_key, so a restore
// keeps its id when its facts change, with NULL in the columns of mask:
// row.Cols, then id (NULL: SQLite gives a new row one, an existing row
// keeps its own).
func upsertSQL(mask uint64, n int) string {
	key := upsertKey{mask, n}
	if q, ok := upsertCache.Load(key); ok {
		return q.(string)
	}
	var b strings.Builder
	b.WriteString("INSERT INTO restore (" + strings.Join(row.Cols, ", ") + ", id) VALUES ")
	var one strings.Builder
	one.WriteString("(")
	for i := range len(row.Cols) + 1 {
		if i > 0 {
			one.WriteString(",")
		}
		if mask&(1<<i) != 0 {
			one.WriteString("NULL")
		} else {
			one.WriteString("?")
		}
	}
	one.WriteString(")")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(one.String())
	}
	b.WriteString(" ON CONFLICT (natural_key) DO UPDATE SET ")
	first := true
	for _, c := range row.Cols {
		if c == "natural_key" || c == "instance_id" {
			continue
		}
		if !first {
			b.WriteString(", ")
		}
		first = false
		b.WriteString(c + " = excluded." + c)
	}
	q := b.String()
	if n == rowsPerInsert {
		upsertCache.Store(key, q) // partial statements vary too much to keep
	}
	return q
}
