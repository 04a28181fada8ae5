package postgres_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store/postgres"
)

// A load told the facts' months copies every fact and restore straight
// into its month's partition: the DEFAULT partitions' heaps stay empty (a
// row moved out of DEFAULT leaves its dead copy there until a VACUUM, which
// is what filled a disk at 10 M restores). The rows and their months are
// those of a load that moved them afterwards.
func TestLoadCopiesIntoTheMonths(t *testing.T) {
	ctx := context.Background()
	lite := analysedSQLite(t)
	direct := migrateInto(t, lite, open(t))
	moved := loadInto(t, lite, open(t), false)
	months, err := lite.FactMonths(ctx)
	if err != nil || len(months) < 2 {
		t.Fatalf("the source's months: %v %v", months, err)
	}
	heaps := func(db *postgres.DB) (out []int64) {
		t.Helper()
		conn := connect(t, db.URL())
		for _, p := range []string{"history_row_default", "log_restore_default", "restore_default"} {
			var n int64
			if err := conn.QueryRow(ctx, `SELECT pg_relation_size($1::regclass)`, p).Scan(&n); err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
		return out
	}
	if h := heaps(direct); slices.ContainsFunc(h, func(n int64) bool { return n != 0 }) {
		t.Errorf("DEFAULT partitions' heaps after a load with the months: %v bytes, want none", h)
	}
	if h := heaps(moved); !slices.ContainsFunc(h, func(n int64) bool { return n != 0 }) {
		t.Errorf("DEFAULT partitions' heaps after a load that moved its rows: %v bytes: the check above proves nothing", h)
	}
	for _, table := range []string{"history_row", "log_restore", "restore"} {
		a, b := rowsOf(t, direct, table), rowsOf(t, moved, table)
		if len(a) == 0 || !slices.Equal(a, b) {
			t.Errorf("%s: %d rows copied into their months, %d moved there; or they differ", table, len(a), len(b))
		}
	}
}

// rowsOf lists a table's rows as text, with the partition each sits in,
// sorted.
func rowsOf(t *testing.T, db *postgres.DB, table string) []string {
	t.Helper()
	rows, err := connect(t, db.URL()).Query(context.Background(), `SELECT tableoid::regclass::text || ' ' || t::text FROM `+
		pgx.Identifier{table}.Sanitize()+` AS t`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
