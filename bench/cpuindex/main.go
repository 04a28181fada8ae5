// Command cpuindex measures how fast this machine runs the work an import
// does, right now: the machines these benchmarks run on change speed
// several times over within hours (BENCHMARKS.md, "The machine";
// docs/benchmarks-log.md, "Session 11"), so a figure without the machine's
// speed beside it cannot be compared with another.
//
//	cpuindex [-rounds 3]
//
// Each round, on one core, writes 51,200 rows of a history row's shape (a
// JSON text of ~380 bytes and a two-column index) into an in-memory SQLite
// database through modernc, 32 rows a prepared INSERT in transactions of
// 5,120, then reads them back through the index and extracts one JSON
// element of each in SQL, as derivation's questions do. It prints the best
// round's rows per second: the higher, the faster the machine; the ratio of
// two indexes is the ratio of the speeds the same work would run at.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	_ "modernc.org/sqlite"
)

const (
	perQuery = 32
	perTx    = 160 * perQuery
	rows     = 10 * perTx
)

func main() {
	rounds := flag.Int("rounds", 3, "rounds to run; the best one counts")
	flag.Parse()
	best := time.Duration(0)
	for r := 0; r < max(*rounds, 1); r++ {
		d, err := round(context.Background())
		if err != nil {
			fmt.Fprintln(os.Stderr, "cpuindex:", err)
			os.Exit(1)
		}
		if best == 0 || d < best {
			best = d
		}
	}
	fmt.Printf("cpuindex: %.0f rows/s (best of %d rounds of %d rows: %.0f ms)\n",
		float64(rows)/best.Seconds(), max(*rounds, 1), rows, float64(best.Microseconds())/1000)
}

func round(ctx context.Context) (time.Duration, error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (id INTEGER PRIMARY KEY, instance_id INTEGER NOT NULL,
		at INTEGER NOT NULL, facts TEXT NOT NULL); CREATE INDEX t_time ON t (instance_id, at)`); err != nil {
		return 0, err
	}
	insert := "INSERT INTO t (instance_id, at, facts) VALUES " + strings.TrimSuffix(strings.Repeat("(?,?,?),", perQuery), ",")
	start := time.Now()
	args := make([]any, 0, 3*perQuery)
	for tx0 := 0; tx0 < rows; tx0 += perTx {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return 0, err
		}
		stmt, err := tx.PrepareContext(ctx, insert)
		if err != nil {
			tx.Rollback()
			return 0, err
		}
		for i := tx0; i < tx0+perTx; i += perQuery {
			args = args[:0]
			for j := i; j < i+perQuery; j++ {
				args = append(args, j%1000, int64(j)*60000, facts(j))
			}
			if _, err := stmt.ExecContext(ctx, args...); err != nil {
				tx.Rollback()
				return 0, err
			}
		}
		stmt.Close()
		if err := tx.Commit(); err != nil {
			return 0, err
		}
	}
	var n int64
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM t WHERE instance_id BETWEEN 0 AND 999 AND at >= 0
		AND facts ->> 16 LIKE '6%'`).Scan(&n); err != nil {
		return 0, err
	}
	if n != rows {
		return 0, fmt.Errorf("read back %d rows of %d", n, rows)
	}
	return time.Since(start), nil
}

// facts is a history row's facts text, as `fleet` generates them.
func facts(i int) string {
	return fmt.Sprintf(`["LS0%d_Audit","CORP\\svc_logship","L",0,0,null,1,"DC12D8E4-1572-58E7-B188-%012X",`+
		`"50C50726-6723-0FE9-7845-607EE5E784DD","PROD-SQL%04d","PROD-SQL%04d","LS0%d_Audit","L",%d,%d,`+
		`"6040297%016d","6040297%016d",10608640,3182592,15,0,4236,0,1,null,1,2,`+
		`["\\\\nas02\\logship\\PROD-SQL%04d\\LS04_Audit\\LS04_Audit_20250513063410.trn"],[],"history"]`,
		i%5, i, i%1000, i%1000, i%5, 1747100050000+int64(i), 1747100110000+int64(i), i, i+1, i%1000)
}
