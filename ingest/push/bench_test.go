package push_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/mssql/mssqltest"
	"github.com/restorewatch/restorewatch/ingest/push"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

// BenchmarkPushApply measures the central side of collect --push: batches
// of 5,000 msdb history rows (as the TDS test fleet scripts them: one
// restore a quarter-hour per database, log restores mostly) decoded and
// applied through ingest.Loader (store, derive, analyse) into one warehouse.
// Reports history rows/s and compressed bytes per row on the wire.
//
//	go test ./ingest/push -run '^$' -bench PushApply -benchtime 20x
func BenchmarkPushApply(b *testing.B) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "central.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	cl, err := push.New(push.Options{URL: "https://central.example", Token: "rwc_x", Spool: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var batches [][]byte
	for i := range b.N {
		inst := fmt.Sprintf("SQL%03d", i)
		in := mssqltest.New(inst, "16.0.4115.5", 0)
		rows := make([]store.HistoryRow, 0, push.BatchRecords)
		for j := range push.BatchRecords {
			kind := store.KindLog
			if j%96 == 0 {
				kind = store.KindFull
			}
			h := in.AddRestore(mssqltest.Restore{Database: fmt.Sprintf("DB%02d", j%20), Kind: kind,
				Start: start.Add(time.Duration(j/20) * 15 * time.Minute), Seconds: 5 + float64(j%7), Bytes: 64 << 20})
			h.Instance = inst
			h.Origin = store.Origin{Source: "live", File: inst, Line: j + 1}
			rows = append(rows, h)
		}
		if _, err := cl.Records(ctx, "live", inst, func(s store.Sink) error {
			for _, h := range rows {
				if err := s.History(h); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		files, _ := cl.Spooled()
		raw, err := os.ReadFile(files[len(files)-1])
		if err != nil {
			b.Fatal(err)
		}
		batches = append(batches, raw)
	}
	wire := 0
	for _, x := range batches {
		wire += len(x)
	}
	rcv := push.NewReceiver(db, ingest.LoaderOptions{}, nil)
	b.ResetTimer()
	for i := range b.N {
		res, err := rcv.Push(ctx, "zone-b", bytes.NewReader(batches[i]))
		if err != nil || res.Added == 0 {
			b.Fatalf("batch %d: %+v, %v", i, res, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*push.BatchRecords)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(wire)/float64(b.N*push.BatchRecords), "wire-B/row")
}
