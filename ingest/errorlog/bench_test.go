package errorlog_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/errorlog"
	"github.com/restorewatch/restorewatch/store"
)

// genLog writes about size bytes of a busy instance's log (UTF-8, LF): logins,
// failed logins, log backups with their 3014 lines, checkpoints, I/O warnings,
// DBCC, with a restore (4356, 18267/18268 and 3014) every ~400 lines.
func genLog(size int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	var b bytes.Buffer
	b.Grow(size + 4096)
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	stamp := func() string {
		t = t.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
		return t.Format("2006-01-02 15:04:05.00")
	}
	line := func(src, text string) {
		fmt.Fprintf(&b, "%s %-12s%s\n", stamp(), src, text)
	}
	line("Server", "Microsoft SQL Server 2019 (RTM-CU16-GDR) (KB5014353) - 15.0.4236.7 (X64) ")
	b.WriteString("\tMay 29 2022 15:55:47 \n\tCopyright (C) 2019 Microsoft Corporation\n\tEnterprise Edition (64-bit) on Windows Server 2019 Datacenter 10.0 <X64> (Build 17763: ) (Hypervisor)\n\n")
	line("Server", "UTC adjustment: -8:00")
	line("Server", "Server name is 'BENCH01'. This is an informational message only. No user action is required.")
	dbs := []string{"Sales", "Orders", "Inventory", "HR", "Finance_2024", "Reporting"}
	lsn := 1000
	for n := 0; b.Len() < size; n++ {
		db := dbs[rng.IntN(len(dbs))]
		spid := "spid" + strconv.Itoa(51+rng.IntN(200))
		switch k := rng.IntN(100); {
		case n%400 == 399:
			lsn += 40
			line("Backup", "Restore is complete on database '"+db+"'.  The database is now available.")
			line("Backup", fmt.Sprintf("Log was restored. Database: %s, creation date(time): 2020/01/31(10:33:17), first LSN: 582441:%d:1, last LSN: 582441:%d:1, number of dump devices: 1, device information: (FILE=1, TYPE=DISK: {'\\\\backup01\\sql\\%s\\%s_%d.trn'}). This is an informational message. No user action is required.", db, lsn-40, lsn, db, db, n))
			line("Backup", fmt.Sprintf("RESTORE LOG successfully processed %d pages in %d.%03d seconds (12.500 MB/sec).", 100+rng.IntN(9000), rng.IntN(20), rng.IntN(1000)))
		case k < 35:
			line("Logon", fmt.Sprintf("Login succeeded for user 'CORP\\svc_app%d'. Connection made using Windows authentication. [CLIENT: 10.1.%d.%d]", rng.IntN(40), rng.IntN(255), rng.IntN(255)))
		case k < 45:
			line("Logon", "Error: 18456, Severity: 14, State: 8.")
			line("Logon", fmt.Sprintf("Login failed for user 'sa'. Reason: Password did not match that for the login provided. [CLIENT: 172.20.%d.%d]", rng.IntN(255), rng.IntN(255)))
		case k < 65:
			line("Backup", fmt.Sprintf("Log was backed up. Database: %s, creation date(time): 2020/01/31(10:33:17), first LSN: 582441:259880:1, last LSN: 582441:259912:1, number of dump devices: 1, device information: (FILE=1, TYPE=DISK: {'\\\\backup01\\sql\\%s\\%s_%d.trn'}). This is an informational message only. No user action is required.", db, db, db, n))
			line("Backup", fmt.Sprintf("BACKUP LOG successfully processed %d pages in 0.%03d seconds (1.321 MB/sec).", rng.IntN(500), rng.IntN(1000)))
		case k < 75:
			line(spid, fmt.Sprintf("Setting database option RECOVERY to SIMPLE for database '%s'.", db))
		case k < 82:
			line(spid, fmt.Sprintf("DBCC CHECKDB (%s) WITH no_infomsgs executed by CORP\\sqlagent found 0 errors and repaired 0 errors. Elapsed time: 0 hours 0 minutes %d seconds.  Internal database snapshot has split point LSN = 00000027:00000480:0001 and first LSN = 00000027:00000478:0001.", db, rng.IntN(60)))
		case k < 88:
			line(spid+"s", fmt.Sprintf("SQL Server has encountered %d occurrence(s) of I/O requests taking longer than 15 seconds to complete on file [F:\\Data\\%s.mdf] in database id 7.  The OS file handle is 0x0000000000000F3C.  The offset of the latest long I/O is: 0x00000123450000", 1+rng.IntN(9), db))
		case k < 94:
			line(spid, fmt.Sprintf("Starting up database '%s'.", db))
		default:
			line("spid"+strconv.Itoa(20+rng.IntN(30))+"s", "AppDomain 2 (mssqlsystemresource.dbo[runtime].1) is marked for unload due to memory pressure.")
		}
	}
	return b.Bytes()
}

var benchData = map[string][]byte{}

// benchInput builds the input once. RW_ERRORLOG_BENCH_MB sets its size (50
// by default); RW_ERRORLOG_BENCH_DUMP writes it to a file, to compare with
// `iconv -f UTF-16LE -t UTF-8 FILE | grep -c 'was restored'`.
func benchInput(b *testing.B, utf16 bool) []byte {
	key := strconv.FormatBool(utf16)
	if d, ok := benchData[key]; ok {
		return d
	}
	mb := 50
	if v, err := strconv.Atoi(os.Getenv("RW_ERRORLOG_BENCH_MB")); err == nil && v > 0 {
		mb = v
	}
	d := genLog(mb<<20, 1)
	if utf16 {
		d = toUTF16LE(d, true, true)
		d = d[:len(d)&^1]
	}
	if p := os.Getenv("RW_ERRORLOG_BENCH_DUMP"); p != "" && utf16 {
		if err := os.WriteFile(p, d, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	benchData[key] = d
	return d
}

type countSink struct{ restores, hosts, rejects int }

func (c *countSink) History(store.HistoryRow) error    { return nil }
func (c *countSink) LogRestore(store.LogRestore) error { c.restores++; return nil }
func (c *countSink) Host(store.HostSnapshot) error     { c.hosts++; return nil }
func (c *countSink) BackupSet(store.BackupSet) error   { return nil }
func (c *countSink) Reject(store.Reject)               { c.rejects++ }

func benchParse(b *testing.B, utf16 bool) {
	d := benchInput(b, utf16)
	b.SetBytes(int64(len(d)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var s countSink
		if _, err := errorlog.Parse(context.Background(), bytes.NewReader(d), errorlog.Options{File: "bench"}, &s); err != nil {
			b.Fatal(err)
		}
		if s.restores == 0 || s.rejects != 0 {
			b.Fatalf("%+v", s)
		}
	}
}

// BenchmarkParseUTF16 parses a generated Windows log (UTF-16LE, BOM, CRLF).
func BenchmarkParseUTF16(b *testing.B) { benchParse(b, true) }

// BenchmarkParseUTF8 parses the same log as UTF-8 (Linux).
func BenchmarkParseUTF8(b *testing.B) { benchParse(b, false) }

// BenchmarkDecodeUTF16 compares the package's decoder with x/text's.
func BenchmarkDecodeUTF16(b *testing.B) {
	d := benchInput(b, true)[2:]
	mixed := func(r io.Reader) io.Reader { return errorlog.NewMixedReader(r, false) }
	for name, open := range map[string]func(io.Reader) io.Reader{"own": errorlog.NewUTF16LEReader, "xtext": xtextUTF16LE, "mixed": mixed} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(d)))
			buf := make([]byte, 64<<10)
			for b.Loop() {
				r := open(bytes.NewReader(d))
				for {
					if _, err := r.Read(buf); err != nil {
						break
					}
				}
			}
		})
	}
}

// BenchmarkDecodeUTF8 is what the mixed-encoding reader costs a UTF-8 log,
// which it hands on as is unless a line starts another encoding.
func BenchmarkDecodeUTF8(b *testing.B) {
	d := benchInput(b, false)
	b.SetBytes(int64(len(d)))
	buf := make([]byte, 64<<10)
	for b.Loop() {
		r := errorlog.NewMixedReader(bytes.NewReader(d), true)
		for {
			if _, err := r.Read(buf); err != nil {
				break
			}
		}
	}
}

// BenchmarkParseFile parses a real file named by RW_ERRORLOG_BENCH_FILE from
// disk, as an import does (skipped when unset).
func BenchmarkParseFile(b *testing.B) {
	p := os.Getenv("RW_ERRORLOG_BENCH_FILE")
	if p == "" {
		b.Skip("RW_ERRORLOG_BENCH_FILE not set")
	}
	st, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for b.Loop() {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		var s countSink
		_, err = errorlog.Parse(context.Background(), f, errorlog.Options{File: filepath.Base(p), Instance: "BENCH"}, &s)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(s.restores), "restores")
		b.ReportMetric(float64(s.rejects), "rejects")
	}
}
