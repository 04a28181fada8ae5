// Command writefloor measures what modernc's SQLite alone costs to write the
// rows a history import stores, without parsing, deriving or analysing: it
// reads every history row or every restore row of an imported warehouse
// into memory, then times writing them into a new table of the same shape
// (BENCHMARKS.md, "History CSV import").
//
//	writefloor -from WAREHOUSE -table history|restore|both [-index] [-json] [-nonull] [-o SCRATCH.db]
//
// -table history writes history_row's columns (but its id) with its UNIQUE
// key, 32 rows per prepared INSERT (as store's importer does); -table
// restore writes restore's columns (but its id), 20 rows per prepared INSERT
// with every column bound (store's writer instead leaves NULL columns out
// of the statement), with restore_series as well under -index. The columns
// are the source warehouse's own. -json sends each batch of 5,000 rows
// as one JSON text that the INSERT expands with json_each instead of binding
// each value. -nonull leaves each row's NULL columns out of its statement,
// rows grouped by their NULL columns, as store's restore writer does.
// -table both writes the history rows and then the restores (with
// restore_series and -nonull): what writing both the raw facts and the
// derived restores costs modernc on one connection with the index kept
// while inserting (issue 42). Not a floor for the importer, which drops
// its restore indexes for a large import and rebuilds them after. Every batch is one transaction, as in an import.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite"
)

const batch = 5000

func main() {
	from := flag.String("from", "", "an imported warehouse to read the rows from")
	table := flag.String("table", "history", "history or restore")
	index := flag.Bool("index", false, "with -table restore: keep restore_series while writing")
	asJSON := flag.Bool("json", false, "one JSON text per batch, expanded by json_each")
	nonull := flag.Bool("nonull", false, "leave each row's NULL columns out of its statement")
	out := flag.String("o", "writefloor.db", "scratch warehouse to write (replaced)")
	flag.Parse()
	if *table == "both" {
		start := time.Now()
		if err := run(*from, "history", *out, false, false, false); err != nil {
			fmt.Fprintln(os.Stderr, "writefloor:", err)
			os.Exit(1)
		}
		// The second table goes into the same file, as in a warehouse.
		if err := runInto(*from, "restore", *out, true, false, true, false); err != nil {
			fmt.Fprintln(os.Stderr, "writefloor:", err)
			os.Exit(1)
		}
		fmt.Printf("both: %.2f s, reading the rows into memory included\n", time.Since(start).Seconds())
		return
	}
	if err := run(*from, *table, *out, *index, *asJSON, *nonull); err != nil {
		fmt.Fprintln(os.Stderr, "writefloor:", err)
		os.Exit(1)
	}
}

func run(from, table, out string, index, asJSON, nonull bool) error {
	return runInto(from, table, out, index, asJSON, nonull, true)
}

// runInto writes table's rows of from into out, replacing out first if
// fresh.
func runInto(from, table, out string, index, asJSON, nonull, fresh bool) error {
	if from == "" {
		return fmt.Errorf("-from names no warehouse")
	}
	src, err := sql.Open("sqlite", "file:"+from+"?mode=ro")
	if err != nil {
		return err
	}
	defer src.Close()
	if fresh {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(out + suffix)
		}
	}
	dst, err := sql.Open("sqlite", "file:"+out+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=cache_size(-32768)&_txlock=immediate")
	if err != nil {
		return err
	}
	defer dst.Close()
	dst.SetMaxOpenConns(1)
	var ddl []string
	per := 0
	switch table {
	case "history":
		per = 32
		ddl = []string{`CREATE TABLE history_row (id INTEGER PRIMARY KEY, instance_id INTEGER NOT NULL,
			restore_history_id INTEGER NOT NULL, restore_local INTEGER NOT NULL, facts TEXT NOT NULL,
			origin TEXT NOT NULL DEFAULT '', UNIQUE (instance_id, restore_history_id, restore_local))`}
		table = "history_row"
	case "restore":
		per = 20
		var q string
		if err := src.QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'restore'`).Scan(&q); err != nil {
			return err
		}
		ddl = []string{strings.Replace(q, "REFERENCES instance (id) ON DELETE CASCADE", "", 1)}
		if index {
			ddl = append(ddl, `CREATE INDEX restore_series ON restore (instance_id, database_name, kind, at_utc)`)
		}
	default:
		return fmt.Errorf("-table %q: history or restore", table)
	}
	for _, q := range ddl {
		if _, err := dst.Exec(q); err != nil {
			return err
		}
	}
	cols, err := columns(src, table)
	if err != nil {
		return err
	}
	data, err := load(src, `SELECT `+strings.Join(cols, ", ")+` FROM `+table+` ORDER BY id`, len(cols))
	if err != nil {
		return err
	}
	start := time.Now()
	switch {
	case asJSON:
		err = writeJSON(dst, table, cols, data)
	case nonull:
		err = writeNonNull(dst, table, cols, data, per)
	default:
		err = write(dst, table, cols, data, per)
	}
	if err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Printf("%s: %d rows in %.2f s (%.0f rows/s, %.2f µs/row); index %v, json %v, nonull %v\n", table, len(data),
		took.Seconds(), float64(len(data))/took.Seconds(), took.Seconds()*1e6/float64(len(data)), index, asJSON, nonull)
	return nil
}

// columns lists table's columns in src but its id.
func columns(src *sql.DB, table string) ([]string, error) {
	rows, err := src.Query(`SELECT name FROM pragma_table_info(?) WHERE name <> 'id' ORDER BY cid`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	if len(cols) == 0 && rows.Err() == nil {
		return nil, fmt.Errorf("the warehouse has no table %s", table)
	}
	return cols, rows.Err()
}

func load(src *sql.DB, q string, n int) ([][]any, error) {
	rows, err := src.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		v := make([]any, n)
		p := make([]any, n)
		for i := range v {
			p[i] = &v[i]
		}
		if err := rows.Scan(p...); err != nil {
			return nil, err
		}
		for i, x := range v {
			if b, ok := x.([]byte); ok {
				v[i] = string(b)
			}
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// write inserts data per rows to a prepared statement, batch rows to a
// transaction.
func write(dst *sql.DB, table string, cols []string, data [][]any, per int) error {
	ctx := context.Background()
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
	head := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES "
	full := head + strings.TrimSuffix(strings.Repeat(one+",", per), ",")
	args := make([]any, 0, per*len(cols))
	for off := 0; off < len(data); off += batch {
		end := min(off+batch, len(data))
		tx, err := dst.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		st, err := tx.Prepare(full)
		if err != nil {
			return err
		}
		i := off
		for ; i+per <= end; i += per {
			args = args[:0]
			for _, r := range data[i : i+per] {
				args = append(args, r...)
			}
			if _, err := st.Exec(args...); err != nil {
				return err
			}
		}
		for ; i < end; i++ {
			if _, err := tx.Exec(head+one, data[i]...); err != nil {
				return err
			}
		}
		st.Close()
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// writeNonNull inserts data per rows to a prepared statement, batch rows to
// a transaction, each statement naming only the columns its rows have
// values for (rows grouped by their NULL columns; a group's remainder in
// one statement at the batch's end).
func writeNonNull(dst *sql.DB, table string, cols []string, data [][]any, per int) error {
	ctx := context.Background()
	type group struct {
		cols []string
		args []any
		n    int
	}
	insert := func(g *group, rows int) string {
		one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(g.cols)), ",") + ")"
		return "INSERT INTO " + table + " (" + strings.Join(g.cols, ", ") + ") VALUES " +
			strings.TrimSuffix(strings.Repeat(one+",", rows), ",")
	}
	for off := 0; off < len(data); off += batch {
		tx, err := dst.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		groups, stmts := map[uint64]*group{}, map[uint64]*sql.Stmt{}
		for _, r := range data[off:min(off+batch, len(data))] {
			var mask uint64
			for i, x := range r {
				if x == nil {
					mask |= 1 << i
				}
			}
			g := groups[mask]
			if g == nil {
				g = &group{}
				for i, c := range cols {
					if r[i] != nil {
						g.cols = append(g.cols, c)
					}
				}
				groups[mask] = g
			}
			for _, x := range r {
				if x != nil {
					g.args = append(g.args, x)
				}
			}
			if g.n++; g.n < per {
				continue
			}
			st := stmts[mask]
			if st == nil {
				if st, err = tx.Prepare(insert(g, per)); err != nil {
					return err
				}
				stmts[mask] = st
			}
			if _, err := st.Exec(g.args...); err != nil {
				return err
			}
			g.args, g.n = g.args[:0], 0
		}
		for _, g := range groups {
			if g.n > 0 {
				if _, err := tx.Exec(insert(g, g.n), g.args...); err != nil {
					return err
				}
			}
		}
		for _, st := range stmts {
			st.Close()
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// writeJSON inserts each batch as one JSON array of rows.
func writeJSON(dst *sql.DB, table string, cols []string, data [][]any) error {
	sel := make([]string, len(cols))
	for i := range cols {
		sel[i] = "value ->> " + strconv.Itoa(i)
	}
	q := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") SELECT " + strings.Join(sel, ", ") + " FROM json_each(?)"
	var buf []byte
	for off := 0; off < len(data); off += batch {
		buf = append(buf[:0], '[')
		for i, r := range data[off:min(off+batch, len(data))] {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, '[')
			for j, x := range r {
				if j > 0 {
					buf = append(buf, ',')
				}
				switch x := x.(type) {
				case nil:
					buf = append(buf, "null"...)
				case int64:
					buf = strconv.AppendInt(buf, x, 10)
				case float64:
					buf = strconv.AppendFloat(buf, x, 'g', -1, 64)
				case string:
					// Go's quoting is JSON's for printable ASCII, which
					// is all the benchmark fleet writes.
					for _, c := range []byte(x) {
						if c < 0x20 || c > 0x7e {
							return fmt.Errorf("%q is not printable ASCII", x)
						}
					}
					buf = strconv.AppendQuote(buf, x)
				default:
					return fmt.Errorf("a value of type %T", x)
				}
			}
			buf = append(buf, ']')
		}
		buf = append(buf, ']')
		if _, err := dst.Exec(q, string(buf)); err != nil {
			return err
		}
	}
	return nil
}
