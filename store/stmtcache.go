package store

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps statements prepared on a pool, so that a query run once
// per instance (reconciliation reads each dirty instance in its own
// transaction) is parsed once per connection rather than once per
// instance: parsing was a fifth of a day's derivation of 1,000 instances.
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

func (c *stmtCache) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[q]; ok {
		return s, nil
	}
	s, err := c.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if c.m == nil {
		c.m = map[string]*sql.Stmt{}
	}
	c.m[q] = s
	return s, nil
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.m {
		s.Close()
	}
	c.m = nil
}

// cachedTx is a transaction of the pool whose statements come from the
// cache (a querier).
type cachedTx struct {
	tx *sql.Tx
	c  *stmtCache
}

func (t cachedTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	s, err := t.c.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return t.tx.StmtContext(ctx, s).QueryContext(ctx, args...)
}

func (t cachedTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	s, err := t.c.stmt(ctx, q)
	if err != nil {
		// A Row carrying the error: the query's own text fails the same way.
		return t.tx.QueryRowContext(ctx, q, args...)
	}
	return t.tx.StmtContext(ctx, s).QueryRowContext(ctx, args...)
}
