package mssql_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/ingest/mssql/mssqltest"
	"github.com/restorewatch/restorewatch/store"
)

func testBackups(t0 time.Time) []store.BackupSet {
	off := 120
	full := store.BackupSet{Database: "Sales", UUID: "6C1B0E1E-77A1-4A8E-9E1B-3F2D1C0B0A01", Type: "D", Families: 2,
		FirstLSN: "39000000010000001", LastLSN: "39000000010500001", CheckpointLSN: "39000000010000101", Checksums: true,
		FirstForkGUID: "E1F0C6C5-3B7A-4F19-9A0B-6D1C2E3F4A5B", LastForkGUID: "E1F0C6C5-3B7A-4F19-9A0B-6D1C2E3F4A5B",
		Start: t0, Finish: t0.Add(20 * time.Minute), UTCOffset: &off, Size: 40 << 30, CompressedSize: 10 << 30,
		SoftwareBuild: "16.0.4135", ServerName: "SQL01", MachineName: "SQL01", RecoveryModel: "FULL",
		Media: []store.BackupMedia{{Family: 1, DeviceType: 2, Device: `G:\b\Sales_1.bak`}, {Family: 2, DeviceType: 2, Device: `G:\b\Sales_2.bak`},
			{Family: 1, Mirror: 1, DeviceType: 2, Device: `H:\mirror\Sales_1.bak`}},
		Files: []store.BackupFile{{LogicalName: "Sales", PhysicalName: `D:\Data\Sales.mdf`, Type: "D", Size: 50 << 30, Filegroup: "PRIMARY"},
			{LogicalName: "Sales_log", PhysicalName: `L:\Log\Sales_log.ldf`, Type: "L", Size: 8 << 30}}}
	diff := store.BackupSet{Database: "Sales", UUID: "6C1B0E1E-77A1-4A8E-9E1B-3F2D1C0B0A02", Type: "I", Families: 1,
		FirstLSN: "39000000011000001", LastLSN: "39000000011200001", CheckpointLSN: "39000000011000101",
		DiffBaseLSN: full.CheckpointLSN, DiffBaseGUID: full.UUID, Start: t0.Add(24 * time.Hour), Finish: t0.Add(24*time.Hour + 3*time.Minute),
		Size: 4 << 30, Media: []store.BackupMedia{{Family: 1, DeviceType: 9, Device: "https://acct.blob.core.windows.net/c/Sales_DIFF.bak"}}}
	log := store.BackupSet{Database: "Sales", UUID: "6C1B0E1E-77A1-4A8E-9E1B-3F2D1C0B0A03", Type: "L", Families: 1, CopyOnly: true,
		FirstLSN: "39000000011100001", LastLSN: "39000000011300001", Start: t0.Add(25 * time.Hour), Finish: t0.Add(25*time.Hour + time.Minute),
		Size: 64 << 20, Media: []store.BackupMedia{{Family: 1, DeviceType: 2, Device: `G:\b\Sales.trn`}}}
	return []store.BackupSet{full, diff, log}
}

// The backup source reads the history incrementally on every version the
// collector supports, converts msdb's local times with time_zone, joins the
// stripes in order (mirrors left out) and the fulls' files, and notices a
// rebuilt msdb.
func TestBackupsIncremental(t *testing.T) {
	for _, v := range []struct{ version, schema string }{{"10.50.1600.1", ""}, {"16.0.4135.4", ""}, {"12.0.2000.8", "MI"}} {
		t.Run(v.version+v.schema, func(t *testing.T) {
			in := mssqltest.New("SQL01", v.version, -300)
			if v.schema != "" {
				in.SetSchema(mssqltest.SchemaNamed(v.schema))
			}
			t0 := time.Date(2026, 3, 1, 22, 0, 0, 0, time.UTC)
			sets := testBackups(t0)
			in.AddBackups(sets[:2]...)
			srv, addr, err := mssqltest.Serve(in, "rw", "pw")
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			s := connect(t, addr)
			ctx := context.Background()
			res, err := s.Backups(ctx, mssql.BackupMark{}, 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Sets) != 2 || res.Mark.ID != 2 || res.More {
				t.Fatalf("first pass: %d sets, mark %+v", len(res.Sets), res.Mark)
			}
			f := res.Sets[0]
			if f.Instance != "SQL01" || f.UUID != sets[0].UUID || f.Type != "D" || f.Families != 2 || !f.Checksums ||
				f.LastLSN != sets[0].LastLSN || f.CheckpointLSN != sets[0].CheckpointLSN || f.SoftwareBuild != "16.0.4135" {
				t.Errorf("full %+v", f)
			}
			if !f.Start.Equal(t0) || f.UTCOffset == nil || *f.UTCOffset != 120 {
				t.Errorf("full start %v offset %v, want %v (+120)", f.Start, f.UTCOffset, t0)
			}
			if len(f.Media) != 2 || f.Media[1].Device != `G:\b\Sales_2.bak` || f.Media[0].DeviceType != 2 {
				t.Errorf("media %+v", f.Media)
			}
			if len(f.Files) != 2 || f.Files[1].Type != "L" || f.Files[0].Size != 50<<30 || f.Files[0].Filegroup != "PRIMARY" {
				t.Errorf("files %+v", f.Files)
			}
			// The diff has no offset of its own: the instance's (-300) is msdb's time_zone.
			d := res.Sets[1]
			if d.DiffBaseGUID != sets[0].UUID || d.Media[0].DeviceType != 9 || !d.Finish.Equal(sets[1].Finish) || *d.UTCOffset != -300 {
				t.Errorf("diff %+v", d)
			}
			res, err = s.Backups(ctx, res.Mark, 100)
			if err != nil || len(res.Sets) != 0 {
				t.Fatalf("nothing new: %v %+v", err, res)
			}
			in.AddBackups(sets[2])
			res, err = s.Backups(ctx, res.Mark, 100)
			if err != nil || len(res.Sets) != 1 || !res.Sets[0].CopyOnly || res.Mark.ID != 3 {
				t.Fatalf("third set: %v %+v", err, res)
			}
			in.ResetBackups()
			in.AddBackups(sets[2])
			res, err = s.Backups(ctx, res.Mark, 100)
			if err != nil || !strings.Contains(res.Rebuilt, "msdb rebuilt") || len(res.Sets) != 1 {
				t.Fatalf("rebuilt: %v %+v", err, res)
			}
		})
	}
}

// The row cap splits a pass; the next one resumes at the watermark.
func TestBackupsRowCap(t *testing.T) {
	in := mssqltest.New("SQL01", "16.0.4135.4", 0)
	in.AddBackups(testBackups(time.Date(2026, 3, 1, 22, 0, 0, 0, time.UTC))...)
	srv, addr, err := mssqltest.Serve(in, "rw", "pw")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	s := connect(t, addr)
	res, err := s.Backups(context.Background(), mssql.BackupMark{}, 2)
	if err != nil || len(res.Sets) != 2 || !res.More || len(res.Sets[0].Files) != 2 {
		t.Fatalf("%v %+v", err, res)
	}
	res, err = s.Backups(context.Background(), res.Mark, 2)
	if err != nil || len(res.Sets) != 1 || res.More || res.Sets[0].Type != "L" {
		t.Fatalf("%v %+v", err, res)
	}
}

// The published backup_history_export.sql names only what SQL Server 2008
// R2 through 2022 and Managed Instance have, at every build the lists know.
func TestBackupExportOnEveryVersion(t *testing.T) {
	b, err := os.ReadFile("../csv/backup_history_export.sql")
	if err != nil {
		t.Fatal(err)
	}
	refs, err := mssqltest.Analyze(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) < 40 {
		t.Fatalf("only %d references read", len(refs))
	}
	for _, s := range mssqltest.Schemas() {
		for _, build := range s.Builds() {
			if err := s.Check(refs, build); err != nil {
				t.Errorf("%s %s: %v", s.Name, build, err)
			}
		}
	}
}
