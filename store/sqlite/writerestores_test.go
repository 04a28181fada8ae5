package sqlite

import (
	"context"
	"fmt"
	"hash/fnv"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/row"
)

// TestContentHashForm checks the fast content hash against the "%v|" text
// form it replaced, so the hashes stored by earlier versions stay valid and
// unchanged restores are not rewritten after an upgrade.
func TestContentHashForm(t *testing.T) {
	f, i, b := 12.5, int64(-7), true
	rows := [][]any{
		{int64(1), int64(2), int64(0), nil, int64(5), "db\u00e9|x", "FULL", 1e21, 1234567.0, 0.0001, &f, &i, &b, (*float64)(nil), (*int64)(nil), (*bool)(nil), true, 3, "", float32(1.5)},
	}
	for _, v := range rows {
		h := fnv.New64a()
		for k, x := range v {
			if k == 2 {
				continue
			}
			switch x := x.(type) {
			case *float64:
				if x == nil {
					h.Write([]byte("nil|"))
				} else {
					fmt.Fprintf(h, "%v|", *x)
				}
			case *int64:
				if x == nil {
					h.Write([]byte("nil|"))
				} else {
					fmt.Fprintf(h, "%d|", *x)
				}
			case *bool:
				if x == nil {
					h.Write([]byte("nil|"))
				} else {
					fmt.Fprintf(h, "%t|", *x)
				}
			default:
				fmt.Fprintf(h, "%v|", x)
			}
		}
		if want, got := int64(h.Sum64()>>1), row.ContentHash(v); got != want {
			t.Errorf("row.ContentHash(%v) = %d, want %d", v, got, want)
		}
	}
}

// TestRestoreWriterNullGroups: restores with different NULL columns, more
// than one statement's worth of each, are written in groups by what is NULL
// and each comes back with its own values.
func TestRestoreWriterNullGroups(t *testing.T) {
	if len(row.Cols)+1 > 64 { // and the id
		t.Fatalf("%d restore columns do not fit the writer's 64-bit NULL mask", len(row.Cols))
	}
	ctx := context.Background()
	db := openTestDB(t)
	im, err := db.NewImport(ctx, "test", "t")
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 8*rowsPerInsert + 7 // six NULL patterns, each past one full statement
	for i := range n {
		at := base.Add(time.Duration(i) * time.Hour)
		lsn := fmt.Sprintf("%d00000000100001", i+1)
		h := store.HistoryRow{Instance: "SQL01", RestoreHistoryID: int64(i + 1), RestoreDate: at, Database: fmt.Sprintf("db%d", i%3),
			RestoreType: "D", BackupType: "D", FirstLSN: lsn, LastLSN: lsn, Origin: store.Origin{Source: "history", File: "h.csv", Line: i + 2}}
		if i%2 == 0 {
			size := int64(i+1) << 20
			h.BackupSize, h.SourceServer = &size, "SRC"
		}
		if err := im.History(h); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 { // the error log saw it: engine seconds, a log id
			if err := im.LogRestore(store.LogRestore{Instance: "SQL01", Database: h.Database, Kind: store.KindFull, MessageID: 18267,
				CompletedAt: at.Add(time.Duration(i+10) * time.Second), FirstLSN: lsn, LastLSN: lsn, Has3014: true,
				Pages: int64(128 * (i + 1)), Seconds: float64(i + 10), MBps: 1, Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: i + 1}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := im.CommitAndReconcile(); err != nil {
		t.Fatal(err)
	}
	rs, _, err := db.ListRestores(ctx, store.RestoreFilter{Asc: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != n {
		t.Fatalf("%d restores, want %d", len(rs), n)
	}
	for i, r := range rs {
		if want := fmt.Sprintf("db%d", i%3); r.Database != want {
			t.Errorf("restore %d: database %q, want %q", i, r.Database, want)
		}
		if known := r.DurationS != nil; known != (i%3 == 0) {
			t.Errorf("restore %d: duration %v, want known=%v", i, r.DurationS, i%3 == 0)
		} else if known && *r.DurationS != float64(i+10) {
			t.Errorf("restore %d: duration %v, want %d", i, *r.DurationS, i+10)
		}
		if sized := r.BackupBytes != nil; sized != (i%2 == 0) || sized && *r.BackupBytes != int64(i+1)<<20 {
			t.Errorf("restore %d: backup bytes %v", i, r.BackupBytes)
		}
		if (r.SourceServer == "SRC") != (i%2 == 0) {
			t.Errorf("restore %d: source server %q", i, r.SourceServer)
		}
	}
}
