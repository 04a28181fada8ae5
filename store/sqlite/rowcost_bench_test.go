package sqlite

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkRowCost measures what one row costs modernc's SQLite by the number
// of columns and of secondary indexes, and by whether the indexed values
// arrive in key order: the floor under any import (BENCHMARKS.md, "History
// CSV import"). Rows go 20 per INSERT in one transaction, as reconciliation
// writes them; every value is an integer, the cheapest to bind.
//
//	go test -run '^$' -bench RowCost -benchtime 200000x ./store/
func BenchmarkRowCost(b *testing.B) {
	for _, c := range []struct {
		cols, indexes int
		random        bool
	}{{4, 0, false}, {16, 0, false}, {48, 0, false}, {16, 4, false}, {16, 8, false}, {16, 4, true}, {16, 8, true}} {
		order := "ordered"
		if c.random {
			order = "random"
		}
		b.Run(fmt.Sprintf("cols=%d/indexes=%d/%s", c.cols, c.indexes, order), func(b *testing.B) {
			rowCost(b, c.cols, c.indexes, c.random)
		})
	}
}

func rowCost(b *testing.B, ncol, nidx int, random bool) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(b.TempDir(), "r.db")+
		"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=cache_size(-32768)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	cols := make([]string, ncol)
	for i := range cols {
		cols[i] = fmt.Sprintf("c%d", i)
	}
	if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, " + strings.Join(cols, ", ") + ")"); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < nidx; i++ {
		if _, err := db.Exec(fmt.Sprintf("CREATE INDEX t%d ON t (c%d)", i, i)); err != nil {
			b.Fatal(err)
		}
	}
	const per = 20
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", ncol), ",") + ")"
	q := "INSERT INTO t (" + strings.Join(cols, ", ") + ") VALUES " + strings.TrimSuffix(strings.Repeat(one+",", per), ",")
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	st, err := tx.Prepare(q)
	if err != nil {
		b.Fatal(err)
	}
	args := make([]any, 0, ncol*per)
	b.ResetTimer()
	for i := 0; i < b.N; i += per {
		args = args[:0]
		for j := int64(0); j < per; j++ {
			k := int64(i) + j
			for c := int64(0); c < int64(ncol); c++ {
				v := k*1000 + c
				if random {
					v = (k * 2654435761) % 1000003 * (c + 1)
				}
				args = append(args, v)
			}
		}
		if _, err := st.Exec(args...); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}
