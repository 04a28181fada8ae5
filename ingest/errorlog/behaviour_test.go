package errorlog_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/errorlog"
	"github.com/restorewatch/restorewatch/store"
)

const logRestored = "Log was restored. Database: D, creation date(time): 2024/01/01(00:00:00), first LSN: 5:10:1, last LSN: 5:20:1, number of dump devices: 1, device information: (FILE=1, TYPE=DISK: {'/b/D.trn'}). This is an informational message. No user action is required."

func TestInstanceNaming(t *testing.T) {
	restore := "2024-01-01 10:00:00.00 Backup      " + logRestored + "\n"
	cases := []struct {
		name, log, option, want, source string
	}{
		{"server name after the records", restore + "2024-01-01 10:00:30.00 spid10s     Server name is 'LATE01'. This is an informational message only. No user action is required.\n",
			"", "LATE01", "server_name"},
		{"option wins", restore + "2024-01-01 10:00:30.00 Server      Server name is 'LATE01'.\n", "OPT", "OPT", "option"},
		{"server name beats SPN and path",
			"2024-01-01 09:00:00.00 Server      Logging SQL Server messages in file 'C:\\MSSQL15.INST\\MSSQL\\Log\\ERRORLOG'.\n" +
				"2024-01-01 09:00:01.00 spid20s     The SQL Server Network Interface library could not register the Service Principal Name (SPN) [ MSSQLSvc/box7.corp:INST ] for the SQL Server service.\n" +
				restore + "2024-01-01 10:00:30.00 Server      Server name is 'BOX7\\INST'.\n", "", `BOX7\INST`, "server_name"},
		{"SPN port and path instance",
			"2024-01-01 09:00:00.00 Server      Logging SQL Server messages in file 'C:\\MSSQL15.INST\\MSSQL\\Log\\ERRORLOG'.\n" +
				"2024-01-01 09:00:01.00 spid20s     The SQL Server Network Interface library successfully registered the Service Principal Name (SPN) [ MSSQLSvc/box7.corp:50123 ] for the SQL Server service.\n" +
				restore, "", `BOX7\INST`, "spn"},
		{"SPN of a default instance",
			"2024-01-01 09:00:00.00 Server      Logging SQL Server messages in file 'C:\\MSSQL15.MSSQLSERVER\\MSSQL\\Log\\ERRORLOG'.\n" +
				"2024-01-01 09:00:01.00 spid20s     The SQL Server Network Interface library successfully registered the Service Principal Name (SPN) [ MSSQLSvc/box8.corp:1433 ] for the SQL Server service.\n" +
				restore, "", "BOX8", "spn"},
		{"path alone", "2024-01-01 09:00:00.00 Server      Logging SQL Server messages in file 'C:\\MSSQL15.SQLMOCK\\MSSQL\\Log\\ERRORLOG'.\n" + restore,
			"", "SQLMOCK", "log_path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := parseBytes(t, "ERRORLOG", []byte(tc.log), tc.option)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.stats.Instance != tc.want || r.stats.InstanceSource != tc.source {
				t.Errorf("instance %q from %q, want %q from %q", r.stats.Instance, r.stats.InstanceSource, tc.want, tc.source)
			}
			if len(r.got.LogRestores) != 1 || r.got.LogRestores[0].Instance != tc.want {
				t.Errorf("restores %+v", r.got.LogRestores)
			}
		})
	}
}

func TestNoInstanceName(t *testing.T) {
	log := "2024-01-01 09:00:00.00 Server      Logging SQL Server messages in file 'C:\\MSSQL15.MSSQLSERVER\\MSSQL\\Log\\ERRORLOG'.\n" +
		"2024-01-01 10:00:00.00 Backup      " + logRestored + "\n"
	r := parseBytes(t, "ERRORLOG.3", []byte(log), "")
	if r.err == nil || r.err.Error() != "errorlog: ERRORLOG.3: cannot tell the instance name: pass --instance" {
		t.Fatalf("err = %v", r.err)
	}
	if len(r.got.LogRestores)+len(r.got.Hosts) != 0 {
		t.Fatalf("records emitted without a name: %+v", r.got)
	}
	// A log with nothing to import needs no name.
	r = parseBytes(t, "ERRORLOG.4", []byte("2024-01-01 09:00:00.00 spid5s      Starting up database 'model'.\n"), "")
	if r.err != nil {
		t.Fatal(r.err)
	}
}

// A 1 MB line is a line like any other; one past the cap is rejected alone.
func TestLongLines(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("2024-01-01 09:00:00.00 Server      Server name is 'BIG'.\n")                          // 1
	b.WriteString("2024-01-01 09:00:01.00 spid51      DBCC output " + strings.Repeat("x", 1<<20) + "\n") // 2
	b.WriteString("\t" + strings.Repeat("continuation ", 1<<17) + "\n")                                  // 3
	b.WriteString("2024-01-01 10:00:00.00 Backup      " + logRestored + "\n")                            // 4
	b.WriteString("2024-01-01 10:00:00.02 Backup      RESTORE LOG successfully processed 8 pages in 0.010 seconds (6.250 MB/sec).\n")
	b.WriteString("2024-01-01 10:10:00.00 spid51      " + strings.Repeat("y", 5<<20) + "\n") // 6
	b.WriteString("2024-01-01 11:00:00.00 Backup      " + strings.Replace(logRestored, "5:20:1", "5:30:1", 1) + "\n")
	for _, enc := range []string{"utf8", "utf16"} {
		in := b.Bytes()
		if enc == "utf16" {
			in = toUTF16LE(in, true, true)
		}
		r := parseBytes(t, "big", in, "")
		if r.err != nil {
			t.Fatalf("%s: %v", enc, r.err)
		}
		if len(r.got.LogRestores) != 2 || !r.got.LogRestores[0].Has3014 || r.got.LogRestores[0].Origin.Line != 4 || r.got.LogRestores[1].Origin.Line != 7 {
			t.Fatalf("%s: restores %+v", enc, r.got.LogRestores)
		}
		if len(r.got.Rejects) != 1 || r.got.Rejects[0].Line != 6 || !strings.Contains(r.got.Rejects[0].Reason, "longer than 4 MiB") {
			t.Fatalf("%s: rejects %q", enc, r.got.Rejects)
		}
		if r.stats.Lines != 7 {
			t.Errorf("%s: lines %d", enc, r.stats.Lines)
		}
	}
}

func TestProgressAndCancel(t *testing.T) {
	b := genLog(12<<20, 1)
	var calls []int64
	st, err := errorlog.Parse(context.Background(), bytes.NewReader(b), errorlog.Options{File: "g", Instance: "G", Progress: func(n int64) { calls = append(calls, n) }}, &store.Collect{})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) < 3 || calls[len(calls)-1] != int64(len(b)) || st.Bytes != int64(len(b)) {
		t.Fatalf("progress %v for %d bytes", calls, len(b))
	}
	for i := 1; i < len(calls); i++ {
		if calls[i] < calls[i-1] {
			t.Fatalf("progress went back: %v", calls)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := errorlog.Parse(ctx, bytes.NewReader(b), errorlog.Options{File: "g", Instance: "G"}, &store.Collect{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

type failingSink struct{ store.Collect }

var errFull = errors.New("disk full")

func (failingSink) LogRestore(store.LogRestore) error { return errFull }

func TestSinkErrorStops(t *testing.T) {
	_, err := errorlog.Parse(context.Background(), bytes.NewReader(fixture(t, "full_diff_log_norecovery_2023.log")),
		errorlog.Options{File: "f", Instance: "I"}, &failingSink{})
	if !errors.Is(err, errFull) {
		t.Fatalf("err = %v", err)
	}
}

// A 3213 block whose session shows it is a backup never goes to a restore,
// even when a restore of another database completes right after.
func TestBackupBlockNotTaken(t *testing.T) {
	log := string(fixture(t, "tf3014_3213_backup_2014.log")) +
		"2014-09-10 18:10:51.00 Backup      Database was restored: Database: other, creation date(time): 2014/01/01(00:00:00), first LSN: 1:1:1, last LSN: 1:2:1, number of dump devices: 1, device information: (FILE=1, TYPE=DISK: {'x.bak'}). Informational message. No user action required.\n"
	r := parseBytes(t, "f", []byte(log), "I")
	if len(r.got.LogRestores) != 1 || r.got.LogRestores[0].Buffer != nil {
		t.Fatalf("restores %s", dump(r.got.LogRestores))
	}
}
