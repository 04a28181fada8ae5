package analysis_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
)

// seed000 is seed 000's running restore as the collector sees it: 16 TB
// from four files on a share, 2 GB/s to 55 %, then 100 MB/s; restored onto
// a SQL Server 2016 SP1 CU8 instance with 4K-sector disks.
func seed000(t *testing.T) (store.InflightCurve, analysis.KneeFacts) {
	t.Helper()
	c := store.InflightCurve{Instance: `RPT-SQL01\REPORTING`, Database: "Warehouse", Command: "RESTORE DATABASE",
		Statement: `RESTORE DATABASE [Warehouse] FROM DISK = N'\\nas01\sql\Warehouse_1.bak', DISK = N'\\nas01\sql\Warehouse_2.bak', ` +
			`DISK = N'\\nas01\sql\Warehouse_3.bak', DISK = N'\\nas01\sql\Warehouse_4.bak' WITH STATS = 1`,
		Points: curve16TB(0, 1)}
	c.Start, c.StartUTC = c.Points[0].At, c.Points[0].At
	c.LastSeen = c.Points[len(c.Points)-1].At
	f := analysis.KneeFacts{Backup: &store.DeviceBackup{Size: 16e12, CompressedSize: 6e12, Families: 4},
		Build: "13.0.4474.0", Alignment: 4096, AlignmentSource: "the instance's restores"}
	return c, f
}

func TestFindKneeStatesSeed000(t *testing.T) {
	c, f := seed000(t)
	k, ok := analysis.FindKnee(c, f, analysis.DefaultKnownIssues())
	if !ok {
		t.Fatal("no knee in seed 000's curve")
	}
	// 2 GB/s and 100 MB/s, in MiB/s.
	if want := 2e9 / (1 << 20); math.Abs(k.BeforeMiBs-want)/want > 0.05 {
		t.Errorf("before the knee %.0f MiB/s, want about %.0f", k.BeforeMiBs, want)
	}
	if want := 1e8 / (1 << 20); math.Abs(k.AfterMiBs-want)/want > 0.05 {
		t.Errorf("after the knee %.0f MiB/s, want about %.0f", k.AfterMiBs, want)
	}
	if math.Abs(k.Percent-55) > 0.5 || k.Bytes != 16e12 || !k.Running {
		t.Errorf("knee at %.1f %%, size %d, running %v; want 55 %%, 16 TB, running", k.Percent, k.Bytes, k.Running)
	}
	if len(k.Issues) != 1 || k.Issues[0].ID != "KB4088193" || k.Issues[0].Fixed != "13.0.4502.0" ||
		!strings.Contains(k.Issues[0].Why, "compressed") || !strings.Contains(k.Issues[0].Why, "4096") {
		t.Errorf("known issues %+v, want KB4088193 fixed in 13.0.4502.0, saying why", k.Issues)
	}
	names := func(cs []analysis.KneeCheck) (fits []string) {
		for _, c := range cs {
			if c.Fits {
				fits = append(fits, c.Name)
			}
		}
		return fits
	}
	fits := names(k.Checks)
	if len(fits) != 2 || !strings.HasPrefix(fits[0], "4K-sector") || !strings.HasPrefix(fits[1], "Read latency") || !k.Checks[1].Fits {
		t.Errorf("checks that fit: %q; want the 4K-sector check and the share's latency, first", fits)
	}

	// On a fixed build, or from an uncompressed backup, the KB no longer
	// applies; the curve's knee stays.
	fixed := f
	fixed.Build = "13.0.4502.0"
	plain := f
	plain.Backup = &store.DeviceBackup{Size: 16e12, CompressedSize: 16e12}
	for name, g := range map[string]analysis.KneeFacts{"fixed build": fixed, "uncompressed": plain} {
		k, ok := analysis.FindKnee(c, g, analysis.DefaultKnownIssues())
		if !ok || len(k.Issues) != 0 {
			t.Errorf("%s: knee %v, issues %+v; want the knee and no issue", name, ok, k.Issues)
		}
	}
	// Without a size the rates stay in percent a minute.
	nosize := f
	nosize.Backup = nil
	if k, _ := analysis.FindKnee(c, nosize, nil); k.Bytes != 0 || k.BeforeMiBs != 0 || !(k.BeforePctMin > 10*k.AfterPctMin) {
		t.Errorf("without a size: %+v", k)
	}
}

func TestFindKneeFileTableCrawl(t *testing.T) {
	// Seed 002: fast to 92 %, then a crawl; from a local file.
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var pts []store.CurvePoint
	for i := 0; i <= 120; i++ {
		frac := float64(i) / 120
		p := 92 * frac * 3
		if frac > 1.0/3 {
			p = 92 + 8*(frac-1.0/3)*1.5
		}
		pts = append(pts, store.CurvePoint{At: t0.Add(time.Duration(i) * 30 * time.Second), Percent: p})
	}
	c := store.InflightCurve{Instance: "SQL1", Database: "TestUserDatabase", Ended: true, Points: pts, Start: t0, StartUTC: t0,
		Statement: `RESTORE DATABASE [TestUserDatabase] FROM DISK = N'T:\BackupRestoreTest\TestUserDatabase_FULL.bak' WITH STATS = 1`}
	k, ok := analysis.FindKnee(c, analysis.KneeFacts{Build: "12.0.5000.0"}, analysis.DefaultKnownIssues())
	if !ok || math.Abs(k.Percent-92) > 1 {
		t.Fatalf("knee %v at %.1f %%, want at 92 %%", ok, k.Percent)
	}
	if !k.Checks[0].Fits || !strings.HasPrefix(k.Checks[0].Name, "FILESTREAM") || !strings.Contains(k.Checks[0].Command, "fltmc") {
		t.Errorf("first check %+v, want the FILESTREAM/antivirus check with its commands", k.Checks[0])
	}
	if i := slices.IndexFunc(k.Checks, func(c analysis.KneeCheck) bool { return strings.HasPrefix(c.Name, "Read latency") }); k.Checks[i].Fits {
		t.Errorf("a local backup's share latency fits: %+v", k.Checks[i])
	}
	if len(k.Issues) != 0 {
		t.Errorf("issues %+v without the conditions of any", k.Issues)
	}
}

func TestStatementDevices(t *testing.T) {
	got := analysis.StatementDevices(`RESTORE DATABASE [a] FROM DISK = N'\\nas\O''Brien 1.bak',  disk=N'D:\b.bak', URL = 'https://x/y.bak' WITH STATS = 1`)
	want := []string{`\\nas\O'Brien 1.bak`, `D:\b.bak`, "https://x/y.bak"}
	if !slices.Equal(got, want) {
		t.Errorf("devices %q, want %q", got, want)
	}
}
