package csv_test

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/csv"
)

// stripSQL removes comments and the contents of string literals from T-SQL,
// so that keywords and commas inside them do not confuse the checks below.
func stripSQL(sql string) string {
	var b strings.Builder
	for i := 0; i < len(sql); i++ {
		switch {
		case strings.HasPrefix(sql[i:], "--"):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
			b.WriteByte('\n')
		case strings.HasPrefix(sql[i:], "/*"):
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return b.String()
			}
			i += end + 3
			b.WriteByte(' ')
		case sql[i] == '\'':
			b.WriteString("''")
			for i++; i < len(sql); i++ {
				if sql[i] == '\'' {
					if i+1 < len(sql) && sql[i+1] == '\'' {
						i++
						continue
					}
					break
				}
			}
		default:
			b.WriteByte(sql[i])
		}
	}
	return b.String()
}

// selectList returns the column expressions of the last top-level SELECT.
func selectList(t *testing.T, sql string) []string {
	t.Helper()
	word := regexp.MustCompile(`(?i)\b(SELECT|FROM)\b`)
	depth, start, end := 0, -1, -1
	locs := word.FindAllStringIndex(sql, -1)
	next := 0
	for i := 0; i < len(sql); i++ {
		for next < len(locs) && locs[next][0] < i {
			next++
		}
		if next < len(locs) && locs[next][0] == i && depth == 0 {
			switch strings.ToUpper(sql[locs[next][0]:locs[next][1]]) {
			case "SELECT":
				start, end = locs[next][1], -1
			case "FROM":
				if start >= 0 && end < 0 {
					end = i
				}
			}
		}
		switch sql[i] {
		case '(':
			depth++
		case ')':
			depth--
		}
	}
	if start < 0 || end < 0 {
		t.Fatal("no top-level SELECT ... FROM in the export query")
	}
	var cols []string
	depth, from := 0, start
	for i := start; i < end; i++ {
		switch sql[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				cols = append(cols, sql[from:i])
				from = i + 1
			}
		}
	}
	return append(cols, sql[from:end])
}

func TestExportSQLColumns(t *testing.T) {
	if !strings.Contains(csv.ExportSQL, "sqlcmd") || !strings.Contains(csv.ExportSQL, "Export-Csv") {
		t.Error("the header comment should say how to run the query with sqlcmd and PowerShell")
	}
	sql := stripSQL(csv.ExportSQL)
	alias := regexp.MustCompile(`(?is)\bAS\s+\[?(\w+)\]?\s*$`)
	var got []string
	for _, col := range selectList(t, sql) {
		m := alias.FindStringSubmatch(strings.TrimSpace(col))
		if m == nil {
			t.Fatalf("column without an alias: %s", strings.TrimSpace(col))
		}
		got = append(got, m[1])
	}
	if want := csv.Columns(); !reflect.DeepEqual(got, want) {
		t.Errorf("export columns\n got %v\nwant %v", got, want)
	}
}

// TestExportSQLPortable guards the promises of the query's header: it runs
// on SQL Server 2008 R2, reads msdb only, and filters and orders for
// incremental exports.
func TestExportSQLPortable(t *testing.T) {
	sql := strings.ToUpper(stripSQL(csv.ExportSQL))
	// INSERT and EXEC appear once, to read key_algorithm into the query's own
	// table variable where the column exists: sqlversion_test.go checks that.
	for _, banned := range []string{"STRING_AGG", "CONCAT_WS", "TRIM(", "FORMAT(", "IIF(", "TRY_CONVERT", "UPDATE ", "DELETE "} {
		if strings.Contains(sql, banned) {
			t.Errorf("export query uses %s, which SQL Server 2008 R2 lacks or a read-only export must not do", banned)
		}
	}
	for _, must := range []string{
		"FOR XML PATH('')", ", TYPE", ".VALUE(", "MSDB.DBO.RESTOREHISTORY AS RH",
		"LEFT JOIN MSDB.DBO.BACKUPSET AS BS", "LEFT JOIN MSDB.DBO.BACKUPMEDIASET AS BMS", "FROM MSDB.DBO.RESTOREFILE AS RF",
		"BMF.MIRROR = 0", "ORDER BY BMF.FAMILY_SEQUENCE_NUMBER", "DECLARE @SINCE DATETIME",
		"WHERE RH.RESTORE_DATE >= @SINCE", "ORDER BY RH.RESTORE_HISTORY_ID", "@@SERVERNAME", ", 121)",
	} {
		if !strings.Contains(sql, must) {
			t.Errorf("export query lacks %q", must)
		}
	}
}
