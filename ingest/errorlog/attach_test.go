package errorlog_test

import (
	"fmt"
	"strings"
	"testing"
)

// logLines builds a log from "time|source|text" rows on 2024-06-01.
func logLines(rows ...string) []byte {
	var b strings.Builder
	for _, r := range rows {
		p := strings.SplitN(r, "|", 3)
		fmt.Fprintf(&b, "2024-06-01 %s %-12s%s\n", p[0], p[1], p[2])
	}
	return []byte(b.String())
}

func logRestoredOf(db, first, last string) string {
	return fmt.Sprintf("Log was restored. Database: %s, creation date(time): 2024/01/01(00:00:00), first LSN: %s, last LSN: %s, number of dump devices: 1, device information: (FILE=1, TYPE=DISK: {'/b/%s.trn'}). This is an informational message. No user action is required.", db, first, last, db)
}

const rec3421 = "Recovery completed for database LS (database ID 9) in 2 second(s) (analysis 1 ms, redo 1500 ms, undo 400 ms.) This is an informational message only. No user action is required."

// Log shipping restores one database's logs seconds apart: the last one
// (WITH RECOVERY) owns the 3421 and 4356 lines printed before its completion
// line, although the previous restore is still held.
func TestQuickSeriesKeepsLinesApart(t *testing.T) {
	b := logLines(
		"10:00:00.10|Backup|"+logRestoredOf("LS", "5:10:1", "5:20:1"),
		"10:00:00.12|Backup|RESTORE LOG successfully processed 10 pages in 0.020 seconds (3.906 MB/sec).",
		"10:00:02.00|spid60|"+rec3421,
		"10:00:02.05|Backup|Restore is complete on database 'LS'.  The database is now available.",
		"10:00:02.10|Backup|"+logRestoredOf("LS", "5:20:1", "5:30:1"),
		"10:00:02.12|Backup|RESTORE LOG successfully processed 20 pages in 1.900 seconds (0.082 MB/sec).",
	)
	r := parseBytes(t, "ls", b, "I")
	if len(r.got.LogRestores) != 2 {
		t.Fatalf("%d restores", len(r.got.LogRestores))
	}
	first, second := r.got.LogRestores[0], r.got.LogRestores[1]
	if first.Recovery != nil || len(first.Phases) != 0 || first.Pages != 10 {
		t.Errorf("first took the second's lines: %s", dump(first))
	}
	if second.Recovery == nil || second.Recovery.RedoMs != 1500 || len(second.Phases) != 1 || second.Pages != 20 {
		t.Errorf("second: %s", dump(second))
	}
}

// A 3421 line may also come after the completion line.
func TestRecoveryAfterCompletion(t *testing.T) {
	b := logLines(
		"10:00:00.10|Backup|"+logRestoredOf("LS", "5:10:1", "5:20:1"),
		"10:00:00.12|Backup|RESTORE LOG successfully processed 10 pages in 0.020 seconds (3.906 MB/sec).",
		"10:00:01.50|spid60|"+rec3421,
		"10:30:00.00|spid60|Using 'dbghelp.dll' version '4.0.5'",
	)
	r := parseBytes(t, "ls", b, "I")
	if len(r.got.LogRestores) != 1 || r.got.LogRestores[0].Recovery == nil {
		t.Fatalf("%s", dump(r.got.LogRestores))
	}
}

// A 3014 line a little late (beyond window3014) still goes to the held restore.
func TestLate3014(t *testing.T) {
	b := logLines(
		"10:00:00.10|Backup|"+logRestoredOf("LS", "5:10:1", "5:20:1"),
		"10:00:03.60|Backup|RESTORE LOG successfully processed 10 pages in 0.020 seconds (3.906 MB/sec).",
	)
	r := parseBytes(t, "ls", b, "I")
	if len(r.got.LogRestores) != 1 || !r.got.LogRestores[0].Has3014 || r.got.LogRestores[0].MessageID != 18268 || len(r.got.Rejects) != 0 {
		t.Fatalf("%s %q", dump(r.got.LogRestores), r.got.Rejects)
	}
}

// Bare 3213 blocks (no 3004 lines): a backup completion without a 3014 line
// claims the oldest; a restore without a 3014 line takes the next.
func TestBareBlocks(t *testing.T) {
	block := func(at, spid, count string) []string {
		return []string{at + "|" + spid + "|Backup/Restore buffer configuration parameters", at + "|" + spid + "|BufferCount:                " + count,
			at + "|" + spid + "|MaxTransferSize:            4 MB"}
	}
	rows := append(block("09:00:00.00", "spid70", "7"), block("09:00:05.00", "spid71", "9")...)
	rows = append(rows,
		"09:01:00.00|Backup|Database backed up. Database: X, creation date(time): 2024/01/01(00:00:00), pages dumped: 10, first LSN: 1:1:1, last LSN: 1:2:1, number of dump devices: 1, device information: (FILE=1, TYPE=DISK: {'x.bak'}). This is an informational message only. No user action is required.",
		"09:05:00.00|Backup|"+logRestoredOf("LS", "5:10:1", "5:20:1"),
	)
	r := parseBytes(t, "bb", logLines(rows...), "I")
	if len(r.got.LogRestores) != 1 || r.got.LogRestores[0].Buffer == nil {
		t.Fatalf("%s", dump(r.got.LogRestores))
	}
	if got := r.got.LogRestores[0].Buffer; got.BufferCount != 9 || got.MaxTransferKiB != 4096 {
		t.Errorf("buffer %+v, want spid71's", got)
	}
}

func TestPhaseCap(t *testing.T) {
	rows := []string{"09:00:00.00|spid60|RestoreDatabase: Database Big"}
	for i := 0; i < 300; i++ {
		rows = append(rows, fmt.Sprintf("09:%02d:%02d.00|spid60|%d percent (%d/300 bytes) processed", 1+i/60, i%60, i/3, i))
	}
	rows = append(rows, "10:00:00.00|Backup|"+strings.Replace(logRestoredOf("Big", "5:10:1", "5:20:1"), "Log was restored.", "Database changes were restored.", 1))
	r := parseBytes(t, "cap", logLines(rows...), "I")
	if len(r.got.LogRestores) != 1 || len(r.got.LogRestores[0].Phases) != 200 || r.got.LogRestores[0].Kind != "diff" {
		t.Fatalf("%d restores", len(r.got.LogRestores))
	}
	if p := r.got.LogRestores[0].Phases[0]; p.Text != "RestoreDatabase: Database Big" {
		t.Errorf("first phase %q", p.Text)
	}
}

// After sp_cycle_errorlog the banner comes from the spid that cycled the log.
func TestBannerFromSpid(t *testing.T) {
	b := []byte("2022-03-20 00:00:00.28 spid56      Microsoft SQL Server 2019 (RTM-CU15) (KB5008996) - 15.0.4198.2 (X64) \n" +
		"\tJan 12 2022 22:30:08 \n\tCopyright (C) 2019 Microsoft Corporation\n" +
		"\tStandard Edition (64-bit) on Windows Server 2019 Datacenter 10.0 <X64> (Build 17763: ) (Hypervisor)\n\n" +
		"2022-03-20 00:00:00.28 spid56      UTC adjustment: -5:00\n" +
		"2022-03-20 00:00:00.28 spid56      (c) Microsoft Corporation.\n")
	r := parseBytes(t, "cyc", b, "I")
	if len(r.got.Hosts) != 1 {
		t.Fatalf("%d hosts", len(r.got.Hosts))
	}
	h := r.got.Hosts[0]
	if h.Version != "15.0.4198.2" || h.UpdateLevel != "CU15" || h.Edition != "Standard Edition" || *h.UTCOffset != -300 || h.Hypervisor == nil || !*h.Hypervisor {
		t.Errorf("%s", dump(h))
	}
}
