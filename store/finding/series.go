package finding

import (
	"database/sql"
	"encoding/json"

	"github.com/restorewatch/restorewatch/store"
)

// SeriesRow is a series row as the warehouse stores it, comparable: a
// save writes only the rows that differ from what is stored.
type SeriesRow struct {
	Family                 sql.NullString
	N, NMeasured           int64
	Verdict                string
	Baseline, Current      sql.NullFloat64
	LastAt, LastBytes      sql.NullInt64
	Outliers, ChangePoints string // JSON lists of restore ids
	Note                   string
}

// SeriesColumns are the series columns of Args and Dest, in their order.
const SeriesColumns = `family, n, n_measured, verdict, baseline_mibps, current_mibps, last_at, last_bytes, outliers, change_points, note`

// NewSeriesRow is the row of s.
func NewSeriesRow(s *store.Series) SeriesRow {
	r := SeriesRow{Family: sql.NullString{String: s.Family, Valid: s.Family != ""}, N: int64(s.N),
		NMeasured: int64(s.NMeasured), Verdict: s.Verdict, Outliers: ids(s.Outliers), ChangePoints: ids(s.ChangePoints), Note: s.Note}
	if s.BaselineMiBps != nil {
		r.Baseline = sql.NullFloat64{Float64: *s.BaselineMiBps, Valid: true}
	}
	if s.CurrentMiBps != nil {
		r.Current = sql.NullFloat64{Float64: *s.CurrentMiBps, Valid: true}
	}
	if !s.LastAt.IsZero() {
		r.LastAt = sql.NullInt64{Int64: s.LastAt.UnixMilli(), Valid: true}
	}
	if s.LastBytes != nil {
		r.LastBytes = sql.NullInt64{Int64: *s.LastBytes, Valid: true}
	}
	return r
}

// Args are r's values for SeriesColumns.
func (r *SeriesRow) Args() []any {
	return []any{r.Family, r.N, r.NMeasured, r.Verdict, r.Baseline, r.Current, r.LastAt, r.LastBytes, r.Outliers, r.ChangePoints, r.Note}
}

// Dest are pointers to r's fields for a scan of SeriesColumns.
func (r *SeriesRow) Dest() []any {
	return []any{&r.Family, &r.N, &r.NMeasured, &r.Verdict, &r.Baseline, &r.Current, &r.LastAt, &r.LastBytes, &r.Outliers, &r.ChangePoints, &r.Note}
}

// ids is a list of restore ids as JSON, "[]" for none.
func ids(v []int64) string {
	if v == nil {
		v = []int64{}
	}
	b, _ := json.Marshal(v)
	return string(b)
}
