package errorlog_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// restoreWant is a LogRestore as a test states it: Phases are checked by
// count and by their first and last text, the rest field by field.
type restoreWant struct {
	store.LogRestore
	phases     int
	firstPhase string
	lastPhase  string
}

func at(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05.999", s)
	if err != nil {
		panic(err)
	}
	return t
}

func ip(v int) *int      { return &v }
func i64(v int64) *int64 { return &v }
func bp(v bool) *bool    { return &v }
func origin(f string, l int) store.Origin {
	return store.Origin{Source: "errorlog", File: f, Line: l}
}

type fixtureCase struct {
	file       string
	instance   string // Options.Instance
	wantInst   string
	wantSource string
	restores   []restoreWant
	hosts      []store.HostSnapshot
	rejects    []store.Reject
	backups    int64
	lines      int64
}

func fixtureCases() []fixtureCase {
	const syn = "synthetic_windows_full_diff_log.log"
	synBuf := func(bc, sets, mtx, min, total, tab, align, mbc, mbs, enc int64) *store.BufferConfig {
		return &store.BufferConfig{MemoryLimitMB: 32767, BufferCount: bc, SetsOfBuffers: sets, MaxTransferKiB: mtx,
			MinMaxTransfer: min, TotalBufferKiB: total, TabularDevices: tab, IOAlignment: align,
			MediaBufferCount: mbc, MediaBufferKiB: mbs, EncodeBuffers: enc}
	}
	return []fixtureCase{
		{
			file: syn, wantInst: `SQLPROD01\PROD`, wantSource: "server_name", backups: 2, lines: 149,
			restores: []restoreWant{
				{LogRestore: store.LogRestore{Database: "Sales", Kind: store.KindFull, MessageID: 18267, CompletedAt: at("2024-03-02 08:10:07.01"), UTCOffset: ip(-300),
					FirstLSN: "39000000115200001", LastLSN: "39000000117600001", DeviceCount: 2, DeviceType: "DISK",
					Devices: []string{`\\backup01\sql\Sales\Sales_FULL_1.bak`, `\\backup01\sql\Sales\Sales_FULL_2.bak`},
					Has3014: true, Statement: "RESTORE DATABASE", Pages: 6553610, Seconds: 3006.912, MBps: 17.027,
					Buffer: synBuf(14, 3, 4096, 64, 168*1024, 2, 4096, 14, 4096, 14), Origin: origin(syn, 82)},
					phases: 24, firstPhase: "RestoreDatabase: Database Sales", lastPhase: "RestoreDatabase: Finished"},
				{LogRestore: store.LogRestore{Database: "Sales", Kind: store.KindDiff, MessageID: 18271, CompletedAt: at("2024-03-02 09:00:21.38"), UTCOffset: ip(-300),
					FirstLSN: "41000000880000001", LastLSN: "41000000884000001", DeviceCount: 1, DeviceType: "DISK",
					Devices: []string{`F:\Backup\Sales_DIFF.bak`}, Has3014: true, Statement: "RESTORE DATABASE", Pages: 262146, Seconds: 21.35, MBps: 95.925,
					Buffer: synBuf(7, 1, 1024, 64, 7*1024, 1, 512, 7, 1024, 7), Origin: origin(syn, 116)},
					phases: 19, firstPhase: "Restore(Sales): RESTORE DATABASE started", lastPhase: "Restore(Sales): RESTORE DATABASE finished"},
				{LogRestore: store.LogRestore{Database: "Sales", Kind: store.KindLog, MessageID: 18268, CompletedAt: at("2024-03-02 09:05:04.72"), UTCOffset: ip(-300),
					FirstLSN: "41000000884000001", LastLSN: "41000000931200001", DeviceCount: 1, DeviceType: "DISK",
					Devices: []string{`F:\Backup\Sales_LOG_0905.trn`}, Has3014: true, Statement: "RESTORE LOG", Pages: 30001, Seconds: 4.65, MBps: 50.405,
					Recovery: &store.RecoveryTiming{Seconds: 1, AnalysisMs: 15, RedoMs: 980, UndoMs: 210}, Origin: origin(syn, 126)},
					phases: 7, firstPhase: "Restore(Sales): RESTORE LOG started", lastPhase: "Restore(Sales): RESTORE LOG finished"},
				{LogRestore: store.LogRestore{Database: "Archive", Kind: store.KindFull, MessageID: 18267, CompletedAt: at("2024-03-02 10:02:00.20"), UTCOffset: ip(-300),
					FirstLSN: "7000000010000001", LastLSN: "7000000012400001", DeviceCount: 1, DeviceType: "URL",
					Devices: []string{"https://backups.blob.core.windows.net/sql/Archive.bak"}, Has3014: true, Statement: "RESTORE DATABASE",
					Pages: 100000, Seconds: 119.5, MBps: 6.537, Origin: origin(syn, 142),
					// The bare block of spid81, not spid90's: the BACKUP 3014 line claimed that one.
					Buffer: &store.BufferConfig{MemoryLimitMB: 32767, BufferCount: 6, MaxTransferKiB: 1024, IOAlignment: 512}}},
				{LogRestore: store.LogRestore{Database: "Sales", Kind: store.KindFile, MessageID: 18269, CompletedAt: at("2024-03-02 10:30:00.00"), UTCOffset: ip(-300),
					DeviceCount: 1, DeviceType: "DISK", Devices: []string{`F:\Backup\Sales_FG2.bak`}, Has3014: true,
					Statement: "RESTORE DATABASE ... FILE=<name>", Pages: 5000, Seconds: 1, MBps: 39.062, Origin: origin(syn, 144)},
					phases: 1, firstPhase: "file list: (Sales_Data2)", lastPhase: "file list: (Sales_Data2)"},
				{LogRestore: store.LogRestore{Database: "Fin, Q1 'Close'", Kind: store.KindLog, MessageID: 18268, CompletedAt: at("2024-03-02 10:45:00.00"), UTCOffset: ip(-300),
					FirstLSN: "1200000000500000007", LastLSN: "1200000000510000001", DeviceCount: 1, DeviceType: "VIRTUAL_DEVICE",
					Devices: []string{"{6F2A1C3E-1111-2222-3333-444455556666}1"}, Origin: origin(syn, 146)}},
			},
			hosts: []store.HostSnapshot{{ObservedAt: at("2024-03-02 06:00:01.12"), UTCOffset: ip(-300), Version: "16.0.4115.5", Level: "RTM",
				UpdateLevel: "CU12", UpdateRef: "KB5033663", Edition: "Enterprise Edition: Core-based Licensing",
				OS: "Windows Server 2022 Datacenter 10.0 (Build 20348)", Hypervisor: bp(true), Manufacturer: "VMware, Inc.", Model: "VMware20,1",
				Sockets: i64(2), Cores: i64(32), MemoryMB: i64(262133), IFI: bp(false), TraceFlags: []int{1117, 3004, 3213, 3605},
				Extra: map[string]string{"authentication_mode": "MIXED", "banner_level": "RTM-CU12", "build_date": "Mar 1 2024 18:05:41",
					"command_line_parameters": `-s "PROD" -T 3004`, "cores_per_socket": "8", "log_file": `E:\MSSQL16.PROD\MSSQL\Log\ERRORLOG`,
					"logical_processors_per_socket": "16", "platform": "X64", "process_id": "5120", "product": "Microsoft SQL Server 2022",
					"registry_parameters": `-d E:\MSSQL16.PROD\MSSQL\DATA\master.mdf -e E:\MSSQL16.PROD\MSSQL\Log\ERRORLOG -l E:\MSSQL16.PROD\MSSQL\DATA\mastlog.ldf -T 1117 -T3605 -T 3213`,
					"resource_db_version": "16.00.4115", "server_name": `SQLPROD01\PROD`, "service_account": `CORP\svc-sqlprod`, "total_logical_processors": "32"},
				Origin: origin(syn, 1)}},
			rejects: []store.Reject{
				{File: syn, Line: 147, Reason: `restore completion (message 18268): first lsn "12:x:1": part 2 is not a decimal number`},
				{File: syn, Line: 148, Reason: "RESTORE LOG 3014 line without a restore completion line or a database to attach it to; skipped"},
			},
		},
		{
			file: "linux_2017_cu13.log", instance: "LNX01", wantInst: "LNX01", wantSource: "option", lines: 14,
			hosts: []store.HostSnapshot{{ObservedAt: at("2019-05-03 09:01:09.99"), UTCOffset: ip(0), Version: "14.0.3048.4", Level: "RTM",
				UpdateLevel: "CU13", UpdateRef: "KB4466404", Edition: "Developer Edition", OS: "Linux (Ubuntu 16.04.5 LTS)",
				Sockets: i64(1), Cores: i64(12), MemoryMB: i64(25445),
				Extra: map[string]string{"banner_level": "RTM-CU13", "build_date": "Nov 30 2018 12:57:58", "cores_per_socket": "6",
					"log_file": "/var/opt/mssql/log/errorlog", "logical_processors_per_socket": "12", "platform": "X64", "process_id": "4124",
					"product": "Microsoft SQL Server 2017", "total_logical_processors": "12",
					"registry_parameters": "-d /var/opt/mssql/data/master.mdf -l /var/opt/mssql/data/mastlog.ldf -e /var/opt/mssql/log/errorlog"},
				Origin: origin("linux_2017_cu13.log", 1)}},
		},
		{
			file: "linux_2019_cu16_gdr.log", instance: "LNX02", wantInst: "LNX02", wantSource: "option", lines: 10,
			hosts: []store.HostSnapshot{{ObservedAt: at("2022-07-08 05:42:10.35"), Version: "15.0.4236.7", Level: "RTM", UpdateLevel: "CU16",
				UpdateRef: "KB5014353", Edition: "Developer Edition", OS: "Linux (Ubuntu 20.04.4 LTS)", IFI: bp(true),
				Extra: map[string]string{"banner_level": "RTM-CU16-GDR", "build_date": "May 29 2022 15:55:47", "platform": "X64",
					"product": "Microsoft SQL Server 2019", "resource_db_version": "15.00.4236"},
				Origin: origin("linux_2019_cu16_gdr.log", 1)}},
		},
		{
			file: "linux_2025_cu3.log", instance: "LNX03", wantInst: "LNX03", wantSource: "option", lines: 7,
			hosts: []store.HostSnapshot{{ObservedAt: at("2026-04-08 12:38:26.79"), Version: "17.0.4025.3", Level: "RTM", UpdateLevel: "CU3",
				UpdateRef: "KB5077896", Edition: "Enterprise Developer Edition", OS: "Linux (Ubuntu 24.04.4 LTS)", MemoryMB: i64(12552),
				Extra: map[string]string{"available_memory_mb": "5393", "banner_level": "RTM-CU3", "build_date": "Feb 25 2026 20:54:27",
					"platform": "X64", "product": "Microsoft SQL Server 2025", "resource_db_version": "17.00.4025"},
				Origin: origin("linux_2025_cu3.log", 1)}},
		},
		{
			// No "Server name is" line: the instance part of the log path is all there is.
			file: "windows_2019_express_errorlog_bak.log", wantInst: "SQLMOCK", wantSource: "log_path", lines: 16,
			hosts: []store.HostSnapshot{{ObservedAt: at("2022-11-18 13:43:05.96"), UTCOffset: ip(-480), Version: "15.0.2000.5", Level: "RTM",
				Edition: "Express Edition", OS: "Windows Server 2019 Standard Evaluation 10.0 (Build 17763)", Hypervisor: bp(true),
				Manufacturer: "VMware, Inc.", Model: "VMware7,1", TraceFlags: []int{4022},
				Extra: map[string]string{"authentication_mode": "MIXED", "banner_level": "RTM", "build_date": "Sep 24 2019 13:48:23",
					"command_line_parameters": `-s "SQLMOCK" -m "SqlSetup" -Q -q "SQL_Latin1_General_CP1_CI_AS" -T 4022`,
					"log_file":                `C:\Program Files\Microsoft SQL Server\MSSQL15.SQLMOCK\MSSQL\Log\ERRORLOG`, "platform": "X64",
					"product": "Microsoft SQL Server 2019", "service_account": `NT Service\MSSQL$SQLMOCK`},
				Origin: origin("windows_2019_express_errorlog_bak.log", 1)}},
		},
		{
			// Host lines without a banner or an offset are not a startup.
			file: "windows_2019_express_otel.log", wantInst: "SQLEXPRESS", wantSource: "log_path", lines: 3,
		},
		{
			file: "restore_with_recovery_2024.log", instance: "LNX04", wantInst: "LNX04", wantSource: "option", lines: 7,
			restores: []restoreWant{{LogRestore: store.LogRestore{Database: "AdventureWorks", Kind: store.KindFull, MessageID: 18267,
				CompletedAt: at("2024-11-01 16:27:05.11"), FirstLSN: "53000002968800001", LastLSN: "53000002971200001", DeviceCount: 1, DeviceType: "DISK",
				Devices: []string{"/var/opt/mssql/backups/AdventureWorks.bak"}, Has3014: true, Statement: "RESTORE DATABASE", Pages: 25378,
				Seconds: 0.499, MBps: 397.318, Origin: origin("restore_with_recovery_2024.log", 3)},
				phases: 1, firstPhase: "Restore is complete on database 'AdventureWorks'.  The database is now available."}},
		},
		{
			// The completion line is missing: the 3014 line is named by the NORECOVERY line before it.
			file: "restore_norecovery_2021.log", instance: "LNX05", wantInst: "LNX05", wantSource: "option", lines: 4,
			restores: []restoreWant{{LogRestore: store.LogRestore{Database: "AdventureWorksDW2017", Kind: store.KindFullOrDiff,
				CompletedAt: at("2021-04-03 18:16:36.95"), Has3014: true, Statement: "RESTORE DATABASE", Pages: 12171, Seconds: 0.292, MBps: 325.615,
				Origin: origin("restore_norecovery_2021.log", 4)}, phases: 1,
				firstPhase: "The database 'AdventureWorksDW2017' is marked RESTORING and is in a state that does not allow recovery to be run."}},
		},
		{
			file: "full_diff_log_norecovery_2023.log", instance: "LNX06", wantInst: "LNX06", wantSource: "option", backups: 1, lines: 11,
			restores: []restoreWant{
				{LogRestore: store.LogRestore{Database: "SQLTestDB", Kind: store.KindFull, MessageID: 18267, CompletedAt: at("2023-11-24 13:04:00.47"),
					FirstLSN: "39000000100000001", LastLSN: "39000000102400001", DeviceCount: 1, DeviceType: "DISK",
					Devices: []string{"/var/opt/mssql/data/backups/SQLTestDB.bak"}, Has3014: true, Statement: "RESTORE DATABASE", Pages: 426,
					Seconds: 0.014, MBps: 237.444, Origin: origin("full_diff_log_norecovery_2023.log", 4)}, phases: 1},
				{LogRestore: store.LogRestore{Database: "SQLTestDB", Kind: store.KindDiff, MessageID: 18271, CompletedAt: at("2023-11-24 13:33:07.09"),
					FirstLSN: "39000000151200001", LastLSN: "39000000153600001", DeviceCount: 1, DeviceType: "DISK",
					Devices: []string{"/var/opt/mssql/data/backups/SQLTestDB.DIF"}, Has3014: true, Statement: "RESTORE DATABASE", Pages: 282,
					Seconds: 0.013, MBps: 169.17, Origin: origin("full_diff_log_norecovery_2023.log", 9)}, phases: 1},
				{LogRestore: store.LogRestore{Database: "SQLTestDB", Kind: store.KindLog, MessageID: 18268, CompletedAt: at("2023-11-24 14:05:20.44"),
					FirstLSN: "39000000100000001", LastLSN: "39000000155200001", DeviceCount: 1, DeviceType: "DISK",
					Devices: []string{"/var/opt/mssql/data/backups/SQLTestDB.trn"}, Origin: origin("full_diff_log_norecovery_2023.log", 11)}},
			},
		},
		{
			// A cycled log: the banner's lines come from a spid and the banner itself is cut off.
			file: "cycled_log_backup_unc_gce.log", instance: "GCE01", wantInst: "GCE01", wantSource: "option", backups: 1, lines: 4,
			hosts: []store.HostSnapshot{{ObservedAt: at("2022-03-20 00:00:00.28"), UTCOffset: ip(-300), Manufacturer: "Google",
				Model: "Google Compute Engine", Origin: origin("cycled_log_backup_unc_gce.log", 1)}},
		},
		{
			file: "sql2008_restore_pssql.log", instance: "OLD01", wantInst: "OLD01", wantSource: "option", lines: 5,
			restores: []restoreWant{{LogRestore: store.LogRestore{Database: "dbPerf_MAIN", Kind: store.KindFull, MessageID: 18267,
				CompletedAt: at("2008-01-23 08:38:46.82"), FirstLSN: "647000000488900066", LastLSN: "647000000491800001", DeviceCount: 1,
				DeviceType: "DISK", Devices: []string{`c:\temp\dbperf_main.bak`}, Origin: origin("sql2008_restore_pssql.log", 5)},
				phases: 2, lastPhase: "Restore is complete on database 'dbPerf_MAIN'.  The database is now available."}},
		},
		{
			// An export: 3-digit fractions, runs of spaces, typographic quotes.
			file: "export_lito.log", instance: "LITO", wantInst: "LITO", wantSource: "option", lines: 2,
			restores: []restoreWant{{LogRestore: store.LogRestore{Database: "DBMirror", Kind: store.KindFull, MessageID: 18267,
				CompletedAt: at("2018-03-20 11:10:58.790"), FirstLSN: "35000000034100037", LastLSN: "35000000036000001", DeviceCount: 1,
				DeviceType: "DISK", Devices: []string{`C:\Microsoft\SQLServer\Backup\DBMirror.bak`}, Origin: origin("export_lito.log", 2)}}},
		},
		{
			// A 3421 line with no restore near it is a startup's recovery: nothing to keep.
			file: "recovery_timing_2022.log", instance: "R", wantInst: "R", wantSource: "option", lines: 1,
		},
		{
			// TF 3014/3213 on a backup: the buffer block must not become a restore's.
			file: "tf3014_3213_backup_2014.log", instance: "B", wantInst: "B", wantSource: "option", lines: 23,
		},
		{
			file: "export_xp_readerrorlog.log", wantInst: `RPT01\REPORTING`, wantSource: "spn", lines: 26,
			restores: []restoreWant{
				{LogRestore: store.LogRestore{Database: "Reports", Kind: store.KindFull, MessageID: 18267, CompletedAt: at("2021-09-14 03:00:01.250"),
					UTCOffset: ip(60), FirstLSN: "120000000040000037", LastLSN: "120000000043200001", DeviceCount: 1, DeviceType: "DISK",
					Devices: []string{`D:\Backup\Reports.bak`}, Has3014: true, Statement: "RESTORE DATABASE", Pages: 51650, Seconds: 6.543, MBps: 61.67,
					Recovery: &store.RecoveryTiming{Seconds: 2, AnalysisMs: 40, RedoMs: 1100, UndoMs: 300}, Origin: origin("export_xp_readerrorlog.log", 22)},
					phases: 1},
				{LogRestore: store.LogRestore{Database: "Staging", Kind: store.KindFullOrDiff, CompletedAt: at("2021-09-14 04:00:00.180"), UTCOffset: ip(60),
					Has3014: true, Statement: "RESTORE DATABASE", Pages: 482, Seconds: 0.028, MBps: 134.225, Origin: origin("export_xp_readerrorlog.log", 26)},
					phases: 1, firstPhase: "Restore is complete on database 'Staging'.  The database is now available."},
			},
			hosts: []store.HostSnapshot{{ObservedAt: at("2021-09-14 02:10:00.480"), UTCOffset: ip(60), Version: "13.0.5888.11", Level: "SP2",
				UpdateLevel: "CU17", UpdateRef: "KB5001092", Edition: "Standard Edition", OS: "Windows Server 2016 Standard 10.0 (Build 14393)",
				Hypervisor: bp(true), Manufacturer: "Microsoft Corporation", Model: "Virtual Machine", Sockets: i64(1), Cores: i64(4),
				MemoryMB: i64(16383), IFI: bp(true), TraceFlags: []int{1117, 1118},
				Extra: map[string]string{"banner_level": "SP2-CU17", "build_date": "Mar 19 2021 19:41:38", "cores_per_socket": "4",
					"log_file": `D:\MSSQL13.REPORTING\MSSQL\Log\ERRORLOG`, "logical_processors_per_socket": "4", "platform": "X64",
					"product": "Microsoft SQL Server 2016", "total_logical_processors": "4",
					"registry_parameters": `-d D:\MSSQL13.REPORTING\MSSQL\DATA\master.mdf -e D:\MSSQL13.REPORTING\MSSQL\Log\ERRORLOG -T 1117 -T 1118`},
				Origin: origin("export_xp_readerrorlog.log", 1)}},
		},
		{
			file: "bad_timestamp.log", wantInst: "LAB01", wantSource: "server_name", lines: 15,
			restores: []restoreWant{
				{LogRestore: store.LogRestore{Database: "A", Kind: store.KindFull, MessageID: 18267, CompletedAt: at("2024-01-10 09:30:00.00"),
					UTCOffset: ip(120), FirstLSN: "10000000002000001", LastLSN: "10000000004400001", DeviceCount: 1, DeviceType: "DISK",
					Devices: []string{"/backup/A.bak"}, Has3014: true, Statement: "RESTORE DATABASE", Pages: 100, Seconds: 0.1, MBps: 7.812,
					Origin: origin("bad_timestamp.log", 3)}},
				{LogRestore: store.LogRestore{Database: "A", Kind: store.KindLog, MessageID: 18268, CompletedAt: at("2024-01-10 09:40:00.00"),
					UTCOffset: ip(120), FirstLSN: "10000000004400001", LastLSN: "10000000006000001", DeviceCount: 1, DeviceType: "DISK",
					Devices: []string{"/backup/A.trn"}, Origin: origin("bad_timestamp.log", 11)}},
			},
			hosts: []store.HostSnapshot{{ObservedAt: at("2024-01-10 09:00:00.00"), UTCOffset: ip(120),
				Extra: map[string]string{"server_name": "LAB01"}, Origin: origin("bad_timestamp.log", 1)}},
			rejects: []store.Reject{
				{File: "bad_timestamp.log", Line: 5, Reason: `invalid timestamp "2024-13-45 09:31:00": month out of range`},
				{File: "bad_timestamp.log", Line: 7, Reason: `malformed timestamp "2024-01-10 09:32:00.0x spid": unexpected 'x' after it`},
				{File: "bad_timestamp.log", Line: 8, Reason: `malformed timestamp "2024-01-10 09:32 spid55" (want yyyy-MM-dd HH:mm:ss.ff)`},
				{File: "bad_timestamp.log", Line: 9, Reason: `invalid timestamp "2024-02-30 10:00:00": day out of range`},
				{File: "bad_timestamp.log", Line: 10, Reason: `invalid timestamp "2024-01-10 25:00:00": hour out of range`},
				{File: "bad_timestamp.log", Line: 13, Reason: `restore completion (message 18268): first lsn "1:2": want a:b:c`},
				{File: "bad_timestamp.log", Line: 15, Reason: `UTC adjustment "UTC adjustment: banana" is not an offset`},
			},
		},
		{
			// NUL runs (a crash's padding) before a line and at the end: nothing lost, nothing rejected.
			file: "nul_runs.log", wantInst: "NULHOST", wantSource: "server_name", lines: 5,
			restores: []restoreWant{{LogRestore: store.LogRestore{Database: "D", Kind: store.KindLog, MessageID: 18268,
				CompletedAt: at("2024-05-01 08:10:00.00"), FirstLSN: "5000000001000001", LastLSN: "5000000002000001", DeviceCount: 1,
				DeviceType: "DISK", Devices: []string{"/backup/D.trn"}, Has3014: true, Statement: "RESTORE LOG", Pages: 8, Seconds: 0.01, MBps: 6.25,
				Origin: origin("nul_runs.log", 2)}}},
		},
	}
}

func TestParseFixtures(t *testing.T) {
	for _, tc := range fixtureCases() {
		t.Run(tc.file, func(t *testing.T) {
			r := parseBytes(t, tc.file, fixture(t, tc.file), tc.instance)
			checkCase(t, tc, r)
		})
	}
}

func checkCase(t *testing.T, tc fixtureCase, r result) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("Parse: %v", r.err)
	}
	if r.stats.Instance != tc.wantInst || r.stats.InstanceSource != tc.wantSource {
		t.Errorf("instance = %q from %q, want %q from %q", r.stats.Instance, r.stats.InstanceSource, tc.wantInst, tc.wantSource)
	}
	if r.stats.Backups != tc.backups {
		t.Errorf("backups = %d, want %d", r.stats.Backups, tc.backups)
	}
	if tc.lines != 0 && r.stats.Lines != tc.lines {
		t.Errorf("lines = %d, want %d", r.stats.Lines, tc.lines)
	}
	if len(r.got.LogRestores) != len(tc.restores) {
		t.Fatalf("%d restores, want %d: %+v", len(r.got.LogRestores), len(tc.restores), r.got.LogRestores)
	}
	for i, w := range tc.restores {
		checkRestore(t, i, r.got.LogRestores[i], w, tc.wantInst)
	}
	if len(r.got.Hosts) != len(tc.hosts) {
		t.Fatalf("%d hosts, want %d: %+v", len(r.got.Hosts), len(tc.hosts), r.got.Hosts)
	}
	for i, w := range tc.hosts {
		w.Instance = tc.wantInst
		if g := r.got.Hosts[i]; !reflect.DeepEqual(g, w) {
			t.Errorf("host %d:\n got %s\nwant %s", i, dump(g), dump(w))
		}
	}
	if !reflect.DeepEqual(r.got.Rejects, tc.rejects) && (len(r.got.Rejects) > 0 || len(tc.rejects) > 0) {
		t.Errorf("rejects:\n got %q\nwant %q", r.got.Rejects, tc.rejects)
	}
	if r.stats.Restores != int64(len(tc.restores)) || r.stats.Hosts != int64(len(tc.hosts)) || r.stats.Rejects != int64(len(tc.rejects)) {
		t.Errorf("stats counts %+v", r.stats)
	}
}

func checkRestore(t *testing.T, i int, g store.LogRestore, w restoreWant, inst string) {
	t.Helper()
	if len(g.Phases) != w.phases {
		t.Errorf("restore %d: %d phases, want %d: %q", i, len(g.Phases), w.phases, g.Phases)
	} else if w.phases > 0 {
		if w.firstPhase != "" && g.Phases[0].Text != w.firstPhase {
			t.Errorf("restore %d: first phase %q, want %q", i, g.Phases[0].Text, w.firstPhase)
		}
		if w.lastPhase != "" && g.Phases[len(g.Phases)-1].Text != w.lastPhase {
			t.Errorf("restore %d: last phase %q, want %q", i, g.Phases[len(g.Phases)-1].Text, w.lastPhase)
		}
	}
	if err := g.Validate(); err != nil {
		t.Errorf("restore %d: %v", i, err)
	}
	g.Phases = nil
	want := w.LogRestore
	want.Instance = inst
	if !reflect.DeepEqual(g, want) {
		t.Errorf("restore %d:\n got %s\nwant %s", i, dump(g), dump(want))
	}
}

// dump shows a record with its pointers followed, for a readable diff.
func dump(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
