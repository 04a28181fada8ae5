package mssql_test

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/mssql"
)

// notGranted are the objects a query uses that permissions.sql
// deliberately does not grant, each with why; the script must say so too.
var notGranted = map[string]string{
	"xp_enumerrorlogs": "needs securityadmin; without it the collector reads ERRORLOG.1, .2, ... instead",
}

// Every msdb and master object an embedded query reads has its GRANT in
// permissions.sql, in the documented form (SELECT ON dbo.TABLE in msdb,
// EXECUTE ON sys.xp_… in master): the TDS test server checks no
// permission, so a missing grant would only show on a locked-down server
// as Msg 229 (issue 28 item 7: restorefile and backupfile had none). The
// optional Central Management Server part of the script is commented out,
// so its grants count commented.
func TestPermissionsGrantEveryObjectTheQueriesRead(t *testing.T) {
	script := mssql.PermissionsSQL
	granted := map[string]bool{}   // "msdb.restorehistory", "master.xp_readerrorlog"
	commented := map[string]bool{} // the same, from commented statements
	db := ""
	use := regexp.MustCompile(`(?i)^USE\s+(\w+)\s*;`)
	grant := regexp.MustCompile(`(?i)^(--\s*)?GRANT\s+(SELECT|EXECUTE)\s+ON\s+(dbo|sys)\.(\w+)\s+TO\s+restorewatch\s*;`)
	for _, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if m := use.FindStringSubmatch(line); m != nil {
			db = strings.ToLower(m[1])
		}
		m := grant.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		verb, schema, obj := strings.ToUpper(m[2]), strings.ToLower(m[3]), strings.ToLower(m[4])
		if strings.HasPrefix(obj, "xp_") && (verb != "EXECUTE" || schema != "sys" || db != "master") {
			t.Errorf("%q: an extended procedure is granted in master as EXECUTE ON sys.%s", line, obj)
		}
		if !strings.HasPrefix(obj, "xp_") && (verb != "SELECT" || schema != "dbo") {
			t.Errorf("%q: a table is granted as SELECT ON dbo.%s", line, obj)
		}
		if m[1] != "" {
			commented[db+"."+obj] = true
		} else {
			granted[db+"."+obj] = true
		}
	}
	ref := regexp.MustCompile(`(?i)\b(msdb|master)\.(?:dbo|sys)\.(\w+)`)
	files, err := fs.Glob(mssql.SQLFiles, "*.sql")
	if err != nil || len(files) < 5 {
		t.Fatalf("embedded queries: %v, %v", files, err)
	}
	checked := 0
	for _, f := range files {
		if f == "permissions.sql" {
			continue
		}
		b, _ := fs.ReadFile(mssql.SQLFiles, f)
		for _, line := range strings.Split(string(b), "\n") {
			code, _, _ := strings.Cut(line, "--") // a comment reads nothing
			for _, m := range ref.FindAllStringSubmatch(code, -1) {
				key := strings.ToLower(m[1] + "." + m[2])
				checked++
				switch {
				case granted[key]:
				case commented[key] && f == "cms.sql":
				case notGranted[strings.ToLower(m[2])] != "":
					if !strings.Contains(script, m[2]) {
						t.Errorf("%s reads %s, which permissions.sql leaves out (%s) without saying so", f, m[0], notGranted[strings.ToLower(m[2])])
					}
				default:
					t.Errorf("%s reads %s, which permissions.sql does not grant", f, m[0])
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d object references found in the queries", checked)
	}
}

// sysPermission is the server-level permission each sys object an embedded
// query reads needs, from its Microsoft Learn page: "" for what every login
// sees, "optional " before one permissions.sql leaves commented out (the
// query copes without it and the collector says what is missing). A query
// that reads a sys object not listed here fails the test: its permission
// must be looked up and written down first. The test server checks no
// permission, and a catalog view a login may not see returns no row rather
// than an error, so nothing else would notice.
var sysPermission = map[string]string{
	"dm_exec_requests":                            "VIEW SERVER STATE", // every session's, else only the login's own
	"dm_exec_sql_text":                            "VIEW SERVER STATE",
	"dm_os_sys_info":                              "VIEW SERVER STATE",
	"dm_os_host_info":                             "", // public
	"dm_os_windows_info":                          "", // public
	"dm_os_loaded_modules":                        "VIEW SERVER STATE",
	"dm_os_volume_stats":                          "VIEW SERVER STATE",
	"dm_server_services":                          "VIEW SERVER STATE",
	"configurations":                              "",                             // catalog view readable by public
	"master_files":                                "optional VIEW ANY DEFINITION", // without it only master's and tempdb's files (volumes named partly)
	"sp_executesql":                               "",
	"dm_hadr_database_replica_states":             "VIEW SERVER STATE",
	"dm_hadr_name_id_map":                         "VIEW SERVER STATE",
	"dm_hadr_availability_replica_cluster_states": "VIEW SERVER STATE",
	"availability_group_listeners":                "optional VIEW ANY DEFINITION", // without it no row: the listener is NULL, and said so
}

// TestPermissionsCoverEverySysObject: every sys object an embedded query
// reads (outside comments) has its server-level permission written down
// above, and permissions.sql grants it (or, for an optional one, names it
// in a commented GRANT and explains it).
func TestPermissionsCoverEverySysObject(t *testing.T) {
	script := mssql.PermissionsSQL
	granted, commented := map[string]bool{}, map[string]bool{}
	// A grant is written to restorewatch, or (server permissions, issue 43)
	// built for the login the script is given: SET @q = N'GRANT … TO ' + QUOTENAME(@login).
	grant := regexp.MustCompile(`(?i)^(--\s*)?(?:SET\s+@q\s*=\s*N')?GRANT\s+(VIEW [A-Z ]+?)\s+TO\s+(?:restorewatch\s*;|'\s*\+\s*QUOTENAME\(@login\))`)
	for _, line := range strings.Split(script, "\n") {
		if m := grant.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			p := strings.ToUpper(strings.Join(strings.Fields(m[2]), " "))
			if m[1] != "" {
				commented[p] = true
			} else {
				granted[p] = true
			}
		}
	}
	ref := regexp.MustCompile(`(?i)\bsys\.(\w+)`)
	files, err := fs.Glob(mssql.SQLFiles, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		if f == "permissions.sql" {
			continue
		}
		b, _ := fs.ReadFile(mssql.SQLFiles, f)
		for _, line := range strings.Split(string(b), "\n") {
			code, _, _ := strings.Cut(line, "--")
			for _, m := range ref.FindAllStringSubmatch(code, -1) {
				obj := strings.ToLower(m[1])
				if strings.HasPrefix(obj, "xp_") {
					continue // extended procedures: TestPermissionsGrantEveryObjectTheQueriesRead
				}
				seen[obj] = true
				perm, ok := sysPermission[obj]
				switch {
				case !ok:
					t.Errorf("%s reads sys.%s, whose server-level permission is not written down in sysPermission", f, obj)
				case perm == "":
				case strings.HasPrefix(perm, "optional "):
					p := strings.TrimPrefix(perm, "optional ")
					if !granted[p] && (!commented[p] || !strings.Contains(script, "sys."+obj)) {
						t.Errorf("%s reads sys.%s, which needs %s: permissions.sql neither grants it nor offers it commented, naming sys.%s", f, obj, p, obj)
					}
				case !granted[perm]:
					t.Errorf("%s reads sys.%s, which needs %s: permissions.sql does not grant it", f, obj, perm)
				}
			}
		}
	}
	for obj := range sysPermission {
		if !seen[obj] {
			t.Errorf("sysPermission lists sys.%s, which no query reads any more", obj)
		}
	}
}
