package mssql_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	mssqldb "github.com/microsoft/go-mssqldb"
	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/ingest/mssql/mssqltest"
	"github.com/restorewatch/restorewatch/store"
)

func queryNames() []string {
	names := mssql.SectionNames()
	slices.Sort(names)
	return slices.Compact(names)
}

// TestQueriesNameOnlyWhatEachVersionHas holds every object and column each
// embedded query can reach against each version's list (mssqltest/columns,
// from Microsoft's documentation): the query as the collector sends it to
// that version (its major-version gates applied), at the release's first
// build and at every service-pack build the list names. Outside dynamic SQL
// a name must exist whatever IF it sits under (SQL Server binds it when the
// batch compiles); inside EXEC it must exist wherever the COL_LENGTH and
// OBJECT_ID probes on the way to it hold.
func TestQueriesNameOnlyWhatEachVersionHas(t *testing.T) {
	schemas := mssqltest.Schemas()
	if len(schemas) < 8 {
		t.Fatalf("%d version lists, want 2008R2 … 2022 and MI", len(schemas))
	}
	for _, s := range schemas {
		for _, name := range queryNames() {
			text := mssql.Query(name, s.Major)
			refs, err := mssqltest.Analyze(text)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if len(refs) == 0 && name != "host/properties" && name != "host/traceflags" {
				t.Errorf("%s: no object found in the query: the reader missed its FROM", name)
			}
			for _, b := range s.Builds() {
				if err := s.Check(refs, b); err != nil {
					t.Errorf("query %s on %s (build %s): %v", name, s.Name, b, err)
				}
			}
		}
	}
}

// TestVersionDependentNamesAreProbed checks that each name some version
// lacks reaches the server only under a probe of itself (or one it implies
// on every version), or in the text a major-version gate sends only to
// versions that have it.
func TestVersionDependentNamesAreProbed(t *testing.T) {
	schemas := mssqltest.Schemas()
	everywhere := func(r mssqltest.Ref) bool {
		for _, s := range schemas {
			if r.Column == "" && !s.HasObject(r.Object, s.RTM) || r.Column != "" && !s.Has(r.Object, r.Column, s.RTM) {
				return false
			}
		}
		return true
	}
	probed := map[string]bool{}
	for _, s := range schemas {
		for _, name := range queryNames() {
			refs, err := mssqltest.Analyze(mssql.Query(name, s.Major))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, r := range refs {
				if everywhere(r) {
					continue
				}
				if !r.Dynamic {
					// Only a major-version gate can have put it here: it
					// must then exist from the first build on.
					if r.Column == "" && !s.HasObject(r.Object, s.RTM) || r.Column != "" && !s.Has(r.Object, r.Column, s.RTM) {
						t.Errorf("%s sends %s to %s, which lacks it at %s, outside EXEC", name, r, s.Name, s.RTM)
					}
					continue
				}
				if len(r.Guards) == 0 {
					t.Errorf("%s: %s, which some version lacks, is in EXEC under no probe", name, r)
				}
				if r.Covered() {
					probed[name+" "+r.String()] = true
				}
			}
		}
	}
	// The probes this change added, named so that removing one fails here.
	for _, want := range []string{
		"host/sysinfo sys.dm_os_sys_info.socket_count",
		"host/os sys.dm_os_host_info",
		"host/os sys.dm_os_windows_info",
		"host/services sys.dm_server_services.instant_file_initialization_enabled",
		"host/services sys.dm_server_services",
		"host/volumes sys.dm_os_volume_stats",
	} {
		if !probed[want] {
			t.Errorf("%s is not under a probe of itself", want)
		}
	}
}

// TestCheckerCatchesUnguardedColumns proves the two tests above can fail:
// the queries as they were before the probes, held against the lists, fail
// with SQL Server's own error on the versions that lack the name.
func TestCheckerCatchesUnguardedColumns(t *testing.T) {
	cases := []struct {
		sql, version, want string
	}{
		// key_algorithm (SQL Server 2014) without the major gate.
		{"SELECT rh.restore_history_id, bs.key_algorithm FROM msdb.dbo.restorehistory AS rh " +
			"LEFT JOIN msdb.dbo.backupset AS bs ON bs.backup_set_id = rh.backup_set_id", "2012",
			"Invalid column name 'key_algorithm'. (207)"},
		// An IF without EXEC: the false branch still compiles.
		{"IF COL_LENGTH(N'sys.dm_os_sys_info', N'socket_count') IS NOT NULL SELECT i.socket_count FROM sys.dm_os_sys_info AS i; " +
			"ELSE SELECT i.cpu_count FROM sys.dm_os_sys_info AS i;", "2016", "Invalid column name 'socket_count'. (207)"},
		// host/os of before: dm_os_windows_info for every version before 14,
		// Managed Instance included (it reports 12).
		{"SELECT w.windows_release FROM sys.dm_os_windows_info AS w", "MI", "Invalid object name 'sys.dm_os_windows_info'. (208)"},
		{"SELECT w.windows_release FROM sys.dm_os_windows_info AS w", "2008R2", "Invalid object name 'sys.dm_os_windows_info'. (208)"},
		// The probe tests one column, the EXEC names another.
		{"IF COL_LENGTH(N'msdb.dbo.backupset', N'key_algorithm') IS NOT NULL EXEC (N'SELECT bs.compression_algorithm FROM msdb.dbo.backupset AS bs');",
			"2019", "Invalid column name 'compression_algorithm'. (207)"},
	}
	for _, tc := range cases {
		s := mssqltest.SchemaNamed(tc.version)
		refs, err := mssqltest.Analyze(tc.sql)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		err = s.Check(refs, s.RTM)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s on %s: %v, want %s", tc.sql, tc.version, err, tc.want)
		}
	}
	// And what the probes allow runs.
	ok := "IF COL_LENGTH(N'sys.dm_os_sys_info', N'socket_count') IS NOT NULL EXEC (N'SELECT i.socket_count FROM sys.dm_os_sys_info AS i'); " +
		"ELSE SELECT i.cpu_count FROM sys.dm_os_sys_info AS i;"
	refs, _ := mssqltest.Analyze(ok)
	for _, s := range mssqltest.Schemas() {
		for _, b := range s.Builds() {
			if err := s.Check(refs, b); err != nil {
				t.Errorf("%s at %s: %v", s.Name, b, err)
			}
			sel := s.Selects(refs, "sys.dm_os_sys_info", "socket_count", b)
			if want := s.Has("sys.dm_os_sys_info", "socket_count", b); sel != want {
				t.Errorf("%s at %s: selects socket_count %v, want %v", s.Name, b, sel, want)
			}
		}
	}
}

// TestAnalyzeRejectsWhatItCannotRead: forms the reader would misjudge are
// errors, not silent passes.
func TestAnalyzeRejectsWhatItCannotRead(t *testing.T) {
	for _, sql := range []string{
		"SELECT b.name FROM backupset AS b",                        // unqualified object
		"SELECT x.name FROM msdb.dbo.backupset AS b",               // unknown alias
		"IF EXISTS (SELECT 1 FROM sys.all_columns AS c) SELECT 1;", // another kind of IF
		"IF OBJECT_ID(N'sys.x') IS NOT NULL BEGIN SELECT 1; END",   // a block body
		"EXEC (@sql)", // dynamic SQL from a variable
		"SELECT g.name FROM msdb.dbo.sysjobs AS g JOIN msdb.dbo.sysjobhistory AS g ON 1 = 1", // one alias, two tables
		"SELECT 'unterminated",
	} {
		if _, err := mssqltest.Analyze(sql); err == nil {
			t.Errorf("Analyze(%q) accepted it", sql)
		}
	}
}

// TestCollectorOnEachVersion runs every source of the collector through
// go-mssqldb and the TDS test server answering as 2008 R2 (RTM and SP3),
// 2014, 2016 SP1, 2022 and Azure SQL Managed Instance: the server rejects
// any name its version lacks with SQL Server's error, and takes the branch
// of each probe that version would.
func TestCollectorOnEachVersion(t *testing.T) {
	cases := []struct {
		version, schema string
		keyAlg, sockets bool
		ifi, volumes    bool
		osName          string
	}{
		{"10.50.1600.1", "", false, false, false, false, ""},                               // 2008 R2 RTM: no dm_server_services, dm_os_volume_stats, dm_os_windows_info
		{"10.50.6000.34", "", false, false, false, true, ""},                               // 2008 R2 SP3
		{"12.0.6024.0", "", true, false, false, true, ""},                                  // 2014 SP3
		{"13.0.4001.0", "", true, false, true, true, ""},                                   // 2016 SP1: IFI, no socket_count yet
		{"16.0.4135.4", "", true, true, true, true, "Windows Server 2019 Datacenter 10.0"}, // 2022
		{"12.0.2000.8", "MI", true, true, false, false, "Windows Server 2019 Datacenter 10.0"},
	}
	for _, tc := range cases {
		t.Run(tc.version+tc.schema, func(t *testing.T) {
			in := mssqltest.New("SQL01", tc.version, 60)
			if tc.schema != "" {
				in.SetSchema(mssqltest.SchemaNamed(tc.schema))
			}
			in.SetClock(time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC))
			in.AddRestore(mssqltest.Restore{Database: "Sales", Kind: store.KindFull, Start: time.Date(2026, 3, 2, 2, 0, 0, 0, time.UTC),
				Seconds: 90, Bytes: 8 << 30})
			in.SetRegistered(mssqltest.Registered{Name: "SQL02", Server: "sql02", Group: "Production"})
			srv, addr, err := mssqltest.Serve(in, "rw", "pw")
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			s := connect(t, addr)
			ctx := context.Background()

			h, err := s.Host(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(h.Degraded) != 0 {
				t.Errorf("degraded: %v", h.Degraded)
			}
			snap := h.Snapshot
			if (snap.Sockets != nil) != tc.sockets || (snap.IFI != nil) != tc.ifi || (snap.Extra["volumes"] != "") != tc.volumes {
				t.Errorf("sockets %v ifi %v volumes %q", snap.Sockets, snap.IFI, snap.Extra["volumes"])
			}
			if tc.osName != "" && snap.OS != tc.osName {
				t.Errorf("OS %q, want %q (sys.dm_os_host_info)", snap.OS, tc.osName)
			}
			if snap.MemoryMB == nil || *snap.MemoryMB != 131072 || snap.Cores == nil {
				t.Errorf("memory %v cores %v", snap.MemoryMB, snap.Cores)
			}

			hist, err := s.History(ctx, mssql.HistoryMark{}, 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(hist.Rows) != 1 || (hist.Rows[0].KeyAlgorithm != "") != tc.keyAlg || len(hist.Rows[0].DestinationFiles) != 2 {
				t.Fatalf("history %+v", hist.Rows)
			}
			if _, err := s.Agent(ctx, mssql.AgentMark{}, 100); err != nil {
				t.Errorf("agent: %v", err)
			}
			if _, err := s.Inflight(ctx); err != nil {
				t.Errorf("inflight: %v", err)
			}
			if res, err := s.ErrorLog(ctx, mssql.LogMark{}, in.Now(), in.Now().Add(-72*time.Hour), 1000); err != nil || len(res.Restores) != 1 {
				t.Errorf("errorlog: %+v, %v", res, err)
			}
			for _, q := range srv.Queries() {
				if name := mssql.QueryName(q.SQL); name == "" && q.SQL != "select 1;" {
					t.Errorf("a query without a marker: %.60q", q.SQL)
				}
			}
		})
	}
}

// TestServerRejectsWhatTheVersionLacks: the TDS test server answers a query
// naming a column its version lacks as SQL Server does, so a missing guard
// reaches the collector as the real error.
func TestServerRejectsWhatTheVersionLacks(t *testing.T) {
	in := mssqltest.New("OLD", "11.0.7001.0", 0)
	srv, addr, err := mssqltest.Serve(in, "rw", "pw")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	db, err := sql.Open("sqlserver", "sqlserver://rw:pw@"+addr+"?encrypt=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.Exec(mssql.Marker + "restore_history/rows\nSELECT bs.key_algorithm FROM msdb.dbo.backupset AS bs")
	var e mssqldb.Error
	if !errors.As(err, &e) || e.Number != 207 || e.Message != "Invalid column name 'key_algorithm'." {
		t.Fatalf("error %v, want Msg 207", err)
	}
}

func connect(t *testing.T, addr string) *mssql.Session {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	t.Setenv("RW_T_VERSION_PW", "pw")
	s, err := mssql.Connect(context.Background(), mssql.Instance{Name: "SQL01", Host: host, Port: p, Auth: "sql", User: "rw",
		PasswordEnv: "RW_T_VERSION_PW", Encrypt: "disable"}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
