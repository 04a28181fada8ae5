package postgres

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/restorewatch/restorewatch/store"
)

// TableSource is one table's rows on their way in: its name, its columns
// and the rows (sqlite.TableRows is one).
type TableSource interface {
	pgx.CopyFromSource
	Close() error
}

// TableCount is what loading one table did: the rows the source holds
// (counted apart, before), those copied and those the warehouse then holds.
type TableCount struct {
	Table                string
	Source, Copied, Held int64
}

// Load copies whole tables into this warehouse, which must hold none of
// their rows, in one transaction: an interrupted load leaves it empty. open
// gives each table's columns and rows, count the rows its source holds; the
// load fails, and nothing is kept, unless every table holds afterwards
// exactly what its source counted. Identity sequences then continue after
// the highest id copied. Restorewatch migrate moves a SQLite warehouse so.
//
// months, when not nil, lists the months (YYYYMM) the source's facts fall
// in: their partitions are made first and every fact and restore is copied
// straight into its month's (a source without part_month has it computed on
// the way, as the importer does). Without it rows land in DEFAULT and are
// moved into their months after the copy, which writes them twice and, in
// one transaction, holds both copies on disk until the end: at 10 M
// restores that filled the disk (docs/benchmarks-log.md).
func (db *DB) Load(ctx context.Context, tables []string, count func(table string) (int64, error),
	open func(table string) (cols []string, rows TableSource, err error), months func() ([]int32, error)) ([]TableCount, error) {
	var out []TableCount
	// The restores last, after the facts that name their month (no table
	// references restore; it references instance alone).
	tables = slices.Clone(tables)
	last := func(t string) int {
		if t == "restore" {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(tables, func(a, b string) int { return cmp.Compare(last(a), last(b)) })
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if err := registerCitext(ctx, tx); err != nil {
			return err
		}
		for _, t := range tables {
			var any bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+pgx.Identifier{t}.Sanitize()+`)`).Scan(&any); err != nil {
				return fmt.Errorf("table %s: %w", t, err)
			}
			if any {
				return store.Errorf(store.ECONFLICT, "store: the warehouse %s already holds %s rows: load into an empty database", db.where, t)
			}
		}
		var lm *loadMonths
		if months != nil {
			ms, err := months()
			if err != nil {
				return err
			}
			slices.Sort(ms)
			for _, m := range slices.Compact(ms) {
				if m <= 100000 {
					continue
				}
				if _, err := tx.Exec(ctx, `SELECT rw_add_month($1)`, m); err != nil {
					return fmt.Errorf("partition %d: %w", m, err)
				}
			}
			lm = &loadMonths{}
		}
		for _, t := range tables {
			c, err := db.loadTable(ctx, tx, t, count, open, lm)
			if err != nil {
				return err
			}
			out = append(out, c)
			db.Report(store.Progress{Phase: "copying " + t, Done: len(out), Total: len(tables)})
		}
		if err := continueIdentities(ctx, tx); err != nil {
			return err
		}
		return partitionLoaded(ctx, tx)
	})
	if err != nil {
		return out, fmt.Errorf("store: load %s: %w", db.where, err)
	}
	return out, nil
}

// loadMonths is what a load learnt of the facts' months, by id, to give
// each restore its fact's.
type loadMonths struct{ hist, logs monthsByID }

// monthsByID maps ids to months: a slice for the dense ids a warehouse
// hands out (4 bytes a fact), a map beyond.
type monthsByID struct {
	dense  []int32
	sparse map[int64]int32
}

const denseIDs = 1 << 28

func (m *monthsByID) set(id int64, month int32) {
	if id >= 0 && id < denseIDs {
		if int(id) >= len(m.dense) {
			m.dense = slices.Grow(m.dense, int(id)+1-len(m.dense))[:id+1]
		}
		m.dense[id] = month
		return
	}
	if m.sparse == nil {
		m.sparse = map[int64]int32{}
	}
	m.sparse[id] = month
}

func (m *monthsByID) get(id int64) int32 {
	if id >= 0 && id < int64(len(m.dense)) {
		return m.dense[id]
	}
	return m.sparse[id]
}

// partMonth returns how a load computes part_month for a row of table
// from its source columns, or nil when the table is not partitioned, the
// source has the column, or the months are not known.
func (lm *loadMonths) partMonth(table string, cols []string) (func(vals []any) (any, error), error) {
	if lm == nil || slices.Contains(cols, "part_month") || (table != "history_row" && table != "log_restore" && table != "restore") {
		return nil, nil
	}
	col := func(name string) (int, error) {
		i := slices.Index(cols, name)
		if i < 0 {
			return 0, store.Errorf(store.ECONFLICT, "column %s.%s is not in the source: both must have the same schema version", table, name)
		}
		return i, nil
	}
	i64 := func(v any) (int64, bool) { x, ok := v.(int64); return x, ok }
	id, err := col("id")
	if err != nil {
		return nil, err
	}
	// A fact's month is its local time's (an undated log line's 0, as the
	// importer puts it in DEFAULT); kept by id for the restores after.
	fact := func(timeCol string, ids *monthsByID, undated bool) (func([]any) (any, error), error) {
		at, err := col(timeCol)
		if err != nil {
			return nil, err
		}
		return func(vals []any) (any, error) {
			var m int32
			if ms, ok := i64(vals[at]); ok {
				m = monthOf(ms)
			} else if !undated {
				return nil, fmt.Errorf("%s.%s: %v (%T) is not a time", table, timeCol, vals[at], vals[at])
			}
			if k, ok := i64(vals[id]); ok {
				ids.set(k, m)
			}
			return m, nil
		}, nil
	}
	switch table {
	case "history_row":
		return fact("restore_local", &lm.hist, false)
	case "log_restore":
		return fact("completed_local", &lm.logs, true)
	case "restore":
		nk, err := col("natural_key")
		if err != nil {
			return nil, err
		}
		return func(vals []any) (any, error) {
			k, _ := i64(vals[nk])
			switch {
			case k > 0:
				return lm.hist.get(k), nil
			case k < 0:
				return lm.logs.get(-k), nil
			}
			return int32(0), nil
		}, nil
	}
	return nil, nil
}

func (db *DB) loadTable(ctx context.Context, tx pgx.Tx, t string, count func(string) (int64, error),
	open func(string) ([]string, TableSource, error), lm *loadMonths) (TableCount, error) {
	c := TableCount{Table: t}
	types, err := columnTypes(ctx, tx, t)
	if err != nil {
		return c, err
	}
	if len(types) == 0 {
		return c, store.Errorf(store.ECONFLICT, "table %s is not in the warehouse %s: both must have the same schema version", t, db.where)
	}
	if c.Source, err = count(t); err != nil {
		return c, err
	}
	cols, rows, err := open(t)
	if err != nil {
		return c, err
	}
	defer rows.Close()
	conv := make([]func(any) (any, error), len(cols))
	for i, col := range cols {
		typ, ok := types[col]
		if !ok {
			return c, store.Errorf(store.ECONFLICT, "column %s.%s is not in the warehouse %s: both must have the same schema version", t, col, db.where)
		}
		conv[i] = converter(typ)
	}
	src := &converting{TableSource: rows, conv: conv, table: t, cols: cols}
	into := cols
	if src.extra, err = lm.partMonth(t, cols); err != nil {
		return c, err
	} else if src.extra != nil {
		into = append(slices.Clip(cols), "part_month")
	}
	if c.Copied, err = tx.CopyFrom(ctx, pgx.Identifier{t}, into, src); err != nil {
		return c, fmt.Errorf("copy %s: %w", t, err)
	}
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{t}.Sanitize()).Scan(&c.Held); err != nil {
		return c, fmt.Errorf("count %s: %w", t, err)
	}
	if c.Source != c.Copied || c.Copied != c.Held {
		return c, store.Errorf(store.EINTERNAL, "table %s: the source holds %d rows, %d were copied and %d are held: nothing is kept", t, c.Source, c.Copied, c.Held)
	}
	return c, nil
}

// partitionLoaded gives the rows a load copied their part_month
// (migration 0035): a source without the column (SQLite) leaves it 0, which
// puts every row in DEFAULT. Each month the facts hold gets its partitions,
// then the rows move into them (an UPDATE of the partition key moves a row),
// the facts first: a restore takes its natural fact's month.
func partitionLoaded(ctx context.Context, tx pgx.Tx) error {
	for _, q := range []string{
		`SELECT rw_add_month(m) FROM (SELECT rw_month(restore_local) AS m FROM history_row WHERE part_month = 0
			UNION SELECT rw_month(completed_local) FROM log_restore WHERE part_month = 0 AND completed_local IS NOT NULL) AS months
			WHERE m > 100000 ORDER BY m`,
		`UPDATE history_row SET part_month = rw_month(restore_local) WHERE part_month = 0`,
		`UPDATE log_restore SET part_month = rw_month(completed_local) WHERE part_month = 0 AND completed_local IS NOT NULL`,
		`UPDATE restore AS r SET part_month = h.part_month FROM history_row AS h
			WHERE r.part_month = 0 AND r.natural_key > 0 AND h.id = r.natural_key`,
		`UPDATE restore AS r SET part_month = l.part_month FROM log_restore AS l
			WHERE r.part_month = 0 AND r.natural_key < 0 AND l.id = -r.natural_key AND l.part_month <> 0`,
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("partitions: %w", err)
		}
	}
	return nil
}

// registerCitext lets COPY's binary format write citext columns (text on
// the wire).
func registerCitext(ctx context.Context, tx pgx.Tx) error {
	var oid uint32
	if err := tx.QueryRow(ctx, `SELECT oid FROM pg_type WHERE typname = 'citext'`).Scan(&oid); err != nil {
		return fmt.Errorf("citext: %w", err)
	}
	tx.Conn().TypeMap().RegisterType(&pgtype.Type{Name: "citext", OID: oid, Codec: pgtype.TextCodec{}})
	return nil
}

func columnTypes(ctx context.Context, tx pgx.Tx, table string) (map[string]string, error) {
	rows, err := tx.Query(ctx, `SELECT column_name::text, udt_name::text FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1`, table)
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var c, t string
		if err := rows.Scan(&c, &t); err != nil {
			return nil, fmt.Errorf("columns of %s: %w", table, err)
		}
		out[c] = t
	}
	return out, rows.Err()
}

// converter turns a value as SQLite stores it (its affinity lets an
// integer sit in a REAL column, a whole real in an INTEGER one) into the
// Go value of the PostgreSQL column's type.
func converter(udt string) func(any) (any, error) {
	switch udt {
	case "int8", "int4", "int2":
		return func(v any) (any, error) {
			switch x := v.(type) {
			case nil, int64:
				return x, nil
			case float64:
				if x == math.Trunc(x) && math.Abs(x) < 1<<62 {
					return int64(x), nil
				}
			case string:
				return strconv.ParseInt(x, 10, 64)
			case bool:
				if x {
					return int64(1), nil
				}
				return int64(0), nil
			}
			return nil, fmt.Errorf("%v (%T) is not an integer", v, v)
		}
	case "float8", "float4":
		return func(v any) (any, error) {
			switch x := v.(type) {
			case nil, float64:
				return x, nil
			case int64:
				return float64(x), nil
			case string:
				return strconv.ParseFloat(x, 64)
			}
			return nil, fmt.Errorf("%v (%T) is not a number", v, v)
		}
	case "bytea":
		return func(v any) (any, error) {
			switch x := v.(type) {
			case nil, []byte:
				return x, nil
			case string:
				return []byte(x), nil
			}
			return nil, fmt.Errorf("%v (%T) is not bytes", v, v)
		}
	}
	return func(v any) (any, error) { // text, citext
		switch x := v.(type) {
		case nil, string:
			return x, nil
		case []byte:
			return string(x), nil
		case int64:
			return strconv.FormatInt(x, 10), nil
		case float64:
			return strconv.FormatFloat(x, 'g', -1, 64), nil
		}
		return nil, fmt.Errorf("%v (%T) is not text", v, v)
	}
}

// converting converts each row of a TableSource for COPY.
type converting struct {
	TableSource
	conv  []func(any) (any, error)
	table string
	cols  []string
	// extra, when set, computes one more column from the converted
	// values (part_month).
	extra func([]any) (any, error)
}

func (c *converting) Values() ([]any, error) {
	vals, err := c.TableSource.Values()
	if err != nil {
		return nil, err
	}
	out := make([]any, len(vals), len(vals)+1)
	for i, v := range vals {
		if out[i], err = c.conv[i](v); err != nil {
			return nil, fmt.Errorf("%s.%s: %w", c.table, c.cols[i], err)
		}
	}
	if c.extra != nil {
		x, err := c.extra(out)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// continueIdentities moves every identity column's sequence past the
// highest value copied in, so the next row the warehouse adds gets a new id.
func continueIdentities(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT table_name::text, column_name::text FROM information_schema.columns
		WHERE table_schema = current_schema() AND is_identity = 'YES'`)
	if err != nil {
		return fmt.Errorf("identities: %w", err)
	}
	type col struct{ table, column string }
	var cols []col
	for rows.Next() {
		var c col
		if err := rows.Scan(&c.table, &c.column); err != nil {
			rows.Close()
			return fmt.Errorf("identities: %w", err)
		}
		cols = append(cols, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("identities: %w", err)
	}
	for _, c := range cols {
		q := `SELECT setval(pg_get_serial_sequence($1, $2), COALESCE((SELECT max(` + pgx.Identifier{c.column}.Sanitize() + `) FROM ` +
			pgx.Identifier{c.table}.Sanitize() + `), 0) + 1, false)`
		if _, err := tx.Exec(ctx, q, pgx.Identifier{c.table}.Sanitize(), c.column); err != nil {
			return fmt.Errorf("identity of %s.%s: %w", c.table, c.column, err)
		}
	}
	return nil
}
