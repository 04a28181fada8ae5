package sqlite

import (
	"context"
	"database/sql"
)

// snapshotConn is one connection of the read pool that a deriving
// goroutine keeps for a whole Reconcile, reading each instance in a
// transaction of its own (BEGIN … ROLLBACK: one snapshot of the instance's
// facts and restores) through statements prepared once on it. It is a
// querier. A sql.Tx per instance cost more than its reads at 10,000
// instances a day: database/sql watches the context of every transaction,
// and of every result set inside one, with a goroutine, and on a 2-core
// machine those goroutines' wake-ups delayed the writer by seconds.
// Statements run with the context given, which callers make
// non-cancellable (statementContext) for the same reason.
type snapshotConn struct {
	c     *sql.Conn
	stmts map[string]*sql.Stmt
}

func (db *DB) snapshotConn(ctx context.Context) (*snapshotConn, error) {
	c, err := db.read.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &snapshotConn{c: c, stmts: map[string]*sql.Stmt{}}, nil
}

// begin starts an instance's snapshot; end ends it.
func (s *snapshotConn) begin(ctx context.Context) error {
	_, err := s.c.ExecContext(ctx, `BEGIN`)
	return err
}

func (s *snapshotConn) end(ctx context.Context) error {
	_, err := s.c.ExecContext(ctx, `ROLLBACK`)
	return err
}

func (s *snapshotConn) close() {
	for _, st := range s.stmts {
		st.Close()
	}
	s.c.Close()
}

func (s *snapshotConn) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := s.stmts[q]; ok {
		return st, nil
	}
	st, err := s.c.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	s.stmts[q] = st
	return st, nil
}

func (s *snapshotConn) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := s.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (s *snapshotConn) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := s.stmt(ctx, q)
	if err != nil {
		// A Row carrying the error: the query's own text fails the same way.
		return s.c.QueryRowContext(ctx, q, args...)
	}
	return st.QueryRowContext(ctx, args...)
}
