package postgres

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store/derive"
	"github.com/restorewatch/restorewatch/store/window"
)

// windowSource is a window's reads of one instance (store/window), in its
// derivation's transaction.
type windowSource struct {
	db  *DB
	tx  pgx.Tx
	id  int64
	def sql.NullInt64
}

var _ window.Source = windowSource{}

func (s windowSource) Facts(ctx context.Context, from, to int64) (*derive.Facts, error) {
	f, err := loadFacts(ctx, s.tx, s.id, s.def, from, to)
	if err == nil {
		s.db.windowFacts.Add(int64(len(f.History) + len(f.Logs)))
	}
	return f, err
}

// lsnRowsSQL finds the history rows of an instance within a time range
// (and its months' partitions) that state one of a set of last LSNs: on
// the rows' time index, the LSN read from their facts (position 16,
// row.DecodeHistoryFacts), only the rows found handed over.
const lsnRowsSQL = `SELECT facts::jsonb ->> 16, restore_local FROM history_row
	WHERE instance_id = $1 AND restore_local >= $2 AND restore_local < $3 AND part_month >= $4 AND part_month <= $5
	AND facts::jsonb ->> 16 = ANY($6)`

func (s windowSource) LSNRows(ctx context.Context, from, to int64, lsns []string) (map[string][]int64, error) {
	rows, err := s.tx.Query(ctx, lsnRowsSQL, s.id, from, to, monthOf(from), monthOf(to-1), lsns)
	if err != nil {
		return nil, err
	}
	found := map[string][]int64{}
	var lsn string
	var at int64
	_, err = pgx.ForEachRow(rows, []any{&lsn, &at}, func() error {
		found[lsn] = append(found[lsn], at)
		return nil
	})
	return found, err
}

func (s windowSource) VotesBefore(ctx context.Context, day int64) (start, end int, err error) {
	err = s.tx.QueryRow(ctx, `SELECT COALESCE(SUM(start_votes), 0)::bigint, COALESCE(SUM(end_votes), 0)::bigint
		FROM derive_vote WHERE instance_id = $1 AND day < $2`, s.id, day).Scan(&start, &end)
	return start, end, err
}
