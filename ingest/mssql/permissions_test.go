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
