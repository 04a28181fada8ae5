package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

// cond is f's condition on the restore table (alias r, no join) and its
// arguments, for a normal f. The instance's name is resolved to its id
// first, so the condition walks the restore_series index; ok is false when
// the named instance does not exist (nothing matches).
func (db *DB) cond(ctx context.Context, f store.RestoreFilter) (where string, args []any, ok bool, err error) {
	conds := []string{"1"}
	add := func(cond string, v ...any) { conds, args = append(conds, cond), append(args, v...) }
	if f.Instance != "" {
		var id int64
		err := db.read.QueryRowContext(ctx, `SELECT id FROM instance WHERE name = ?`, f.Instance).Scan(&id)
		if err == sql.ErrNoRows {
			return "", nil, false, nil
		} else if err != nil {
			return "", nil, false, fmt.Errorf("store: restores: %w", err)
		}
		add("r.instance_id = ?", id)
	}
	if f.Database != "" {
		add("r.database_name = ?", f.Database)
	}
	if f.Kind != "" {
		add("r.kind = ?", string(f.Kind))
	}
	if !f.From.IsZero() {
		add("r.at_utc >= ?", f.From.UnixMilli())
	}
	if !f.To.IsZero() {
		add("r.at_utc < ?", f.To.UnixMilli())
	}
	if f.Build != "" {
		add("(r.instance_build = ? OR r.instance_build >= ? AND r.instance_build < ?)", f.Build, f.Build+".", f.Build+"/")
	}
	if f.Source != "" {
		add("r.source_server = ?", f.Source)
	}
	if len(f.IDs) > 0 {
		add("r.id IN ("+strings.TrimSuffix(strings.Repeat("?,", len(f.IDs)), ",")+")", int64Args(f.IDs)...)
	}
	return strings.Join(conds, " AND "), args, true, nil
}

// plusTerms turns cond's column references (other than the instance's)
// into expressions no index serves.
var plusTerms = strings.NewReplacer("r.database_name", "+r.database_name", "r.kind", "+r.kind", "r.at_utc", "+r.at_utc",
	"r.instance_build", "+r.instance_build", "r.source_server", "+r.source_server")

func int64Args(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}
