package mssqltest_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/mssql/mssqltest"
)

// refs formats what Analyze found, one per reference: name, D for dynamic
// SQL, and the guards (+probe for IF, -probe for ELSE).
func refs(t *testing.T, sql string) []string {
	t.Helper()
	rs, err := mssqltest.Analyze(sql)
	if err != nil {
		t.Fatalf("Analyze: %v", err)
	}
	var out []string
	for _, r := range rs {
		s := r.String()
		if r.Dynamic {
			s += " D"
		}
		for _, c := range r.Guards {
			sign := "+"
			if c.Else {
				sign = "-"
			}
			for _, p := range c.Probes {
				s += " " + sign + strings.TrimSuffix(p.Object+"."+p.Column, ".")
			}
		}
		out = append(out, s)
	}
	return out
}

func TestAnalyze(t *testing.T) {
	cases := []struct {
		sql  string
		want []string
	}{
		{ // aliases, brackets, a comment naming a column, a function source
			`SELECT r.[status], t.[text] /* x.y */ -- q.r
			 FROM sys.dm_exec_requests AS r OUTER APPLY sys.dm_exec_sql_text(r.[sql_handle]) AS t`,
			[]string{"sys.dm_exec_requests", "sys.dm_exec_sql_text", "sys.dm_exec_requests.sql_handle",
				"sys.dm_exec_requests.status", "sys.dm_exec_sql_text.text"},
		},
		{ // msdb..table, an alias without AS, a derived table and a table variable
			`DECLARE @v TABLE (id int); SELECT b.type, d.x, v.id FROM msdb..backupset b
			 CROSS APPLY (SELECT 1 AS x) AS d LEFT JOIN @v AS v ON v.id = b.backup_set_id`,
			[]string{"msdb.dbo.backupset", "msdb.dbo.backupset.type", "msdb.dbo.backupset.backup_set_id"},
		},
		{ // CASE ... ELSE is no branch; IF/ELSE IF chains guard their EXECs
			`SELECT CASE WHEN i.cpu_count > 1 THEN 1 ELSE 0 END FROM sys.dm_os_sys_info AS i;
			 IF COL_LENGTH(N'sys.a', N'c') IS NOT NULL AND OBJECT_ID(N'sys.b') IS NOT NULL
			     EXEC (N'SELECT a.c FROM sys.a AS a WHERE a.n = N''x''');
			 ELSE IF OBJECT_ID(N'sys.b') IS NOT NULL
			     EXEC sys.sp_executesql N'SELECT b.d FROM sys.b AS b', N'@p int', @p = 1;
			 ELSE
			     SELECT i.cpu_count FROM sys.dm_os_sys_info AS i;`,
			[]string{"sys.dm_os_sys_info.cpu_count", "sys.dm_os_sys_info",
				"sys.a D +sys.a.c +sys.b", "sys.a.c D +sys.a.c +sys.b", "sys.a.n D +sys.a.c +sys.b",
				"sys.sp_executesql -sys.a.c -sys.b +sys.b", "sys.b D -sys.a.c -sys.b +sys.b", "sys.b.d D -sys.a.c -sys.b +sys.b",
				"sys.dm_os_sys_info.cpu_count -sys.a.c -sys.b -sys.b", "sys.dm_os_sys_info -sys.a.c -sys.b -sys.b"},
		},
		{ // a common table expression is not a base object; procedures are
			`WITH g AS (SELECT s.name FROM msdb.dbo.sysjobs AS s) SELECT gp.name FROM g AS gp;
			 EXEC master.dbo.xp_readerrorlog 0, 1, NULL, NULL;`,
			[]string{"msdb.dbo.sysjobs.name", "msdb.dbo.sysjobs", "master.dbo.xp_readerrorlog"},
		},
	}
	for i, tc := range cases {
		got := refs(t, tc.sql)
		slices.Sort(got)
		slices.Sort(tc.want)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("case %d\n got %q\nwant %q", i, got, tc.want)
		}
	}
}

func TestParseSchemaErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"major 10\nsys.x: a", "no version or major line"},
		{"version 10.50\nmajor 10\nsys.x: a\nsys.x: b", "line 4: sys.x listed twice"},
		{"version 10.50\nmajor 10\nsys.x: a>=10.x", "line 3: bad version"},
		{"version 10.50\nmajor ten", "line 2:"},
		{"version 10.50\nmajor 10\nwhat is this", "line 3: want"},
	} {
		if _, err := mssqltest.ParseSchema("t", tc.text); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.text, err, tc.want)
		}
	}
	s, err := mssqltest.ParseSchema("t", "version 11.0.2100.60\nmajor 11 # comment\nsys.v>=11.0.3000: a b>=11.0.7001\n")
	if err != nil {
		t.Fatal(err)
	}
	b := func(v string) mssqltest.Build { x, _ := mssqltest.ParseBuild(v); return x }
	for _, tc := range []struct {
		build   string
		obj, ab bool
	}{{"11.0.2100", false, false}, {"11.0.5058", true, false}, {"11.0.7001", true, true}} {
		if s.HasObject("sys.v", b(tc.build)) != tc.obj || s.Has("sys.v", "a", b(tc.build)) != tc.obj || s.Has("sys.v", "b", b(tc.build)) != tc.ab {
			t.Errorf("at %s", tc.build)
		}
	}
	if got := fmt.Sprint(s.Builds()); got != "[11.0.2100.60 11.0.3000.0 11.0.7001.0]" {
		t.Errorf("builds %s", got)
	}
}

// Every version list parses and names what the queries need at least once.
func TestSchemas(t *testing.T) {
	names := map[string]bool{}
	for _, s := range mssqltest.Schemas() {
		names[s.Name] = true
		if !s.Has("msdb.dbo.restorehistory", "restore_date", s.RTM) {
			t.Errorf("%s lacks restorehistory", s.Name)
		}
		if got, want := s.Has("msdb.dbo.backupset", "key_algorithm", s.RTM), s.Major >= 12; got != want {
			t.Errorf("%s: key_algorithm %v", s.Name, got)
		}
	}
	for _, want := range []string{"2008R2", "2012", "2014", "2016", "2017", "2019", "2022", "MI"} {
		if !names[want] {
			t.Errorf("no list for %s", want)
		}
	}
	// What one release has, the next has too, but for the column Microsoft
	// documents as removed (2012 renamed it) and one a later service pack of
	// the older release added (2012 SP4 shipped after 2014; the page names
	// 2012 SP4 and 2016 SP1): a name missing from one file is a typo.
	removed := map[string]bool{"sys.dm_os_sys_info.physical_memory_in_bytes": true,
		"sys.dm_server_services.instant_file_initialization_enabled": true}
	all := mssqltest.Schemas()
	for i := 1; i < len(all) && all[i].Name != "MI"; i++ {
		next := map[string]bool{}
		for _, n := range all[i].Names() {
			next[n] = true
		}
		for _, n := range all[i-1].Names() {
			if !next[n] && !removed[n] {
				t.Errorf("%s names %s, %s does not", all[i-1].Name, n, all[i].Name)
			}
		}
	}
	for v, want := range map[string]string{"10.50.6000.34": "2008R2", "13.0.5026.0": "2016", "17.0.4025.3": "2022", "12.0.2000.8": "2014"} {
		b, _ := mssqltest.ParseBuild(v)
		if s := mssqltest.SchemaFor(b); s == nil || s.Name != want {
			t.Errorf("SchemaFor(%s) = %v, want %s", v, s, want)
		}
	}
}

func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"SELECT a.b FROM sys.x AS a",
		"IF COL_LENGTH(N'sys.x', N'c') IS NOT NULL EXEC (N'SELECT a.c FROM sys.x AS a'); ELSE SELECT 1;",
		"/* /* nested */ */ SELECT [a]]b].c FROM msdb..t AS [a]]b] -- x",
		"EXEC sys.sp_executesql N'SELECT ''x''', N'@p int', @p = 1;",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		rs, err := mssqltest.Analyze(sql)
		if err != nil {
			return
		}
		for _, r := range rs {
			if r.Object == "" {
				t.Fatalf("a reference without an object: %+v", r)
			}
		}
	})
}

func FuzzParseSchema(f *testing.F) {
	f.Add("version 10.50.1600.1\nmajor 10\nsys.x>=10.50.2500: a b>=10.50.4000\n")
	f.Add("# c\nversion 1\nmajor 1\nm.d.t:\n")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := mssqltest.ParseSchema("f", text)
		if err != nil {
			return
		}
		if s.RTM[0] == 0 || s.Major == 0 || len(s.Builds()) == 0 {
			t.Fatalf("accepted a schema without a version: %+v", s)
		}
	})
}
