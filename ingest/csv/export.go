package csv

import _ "embed"

// ExportSQL is the published history export query of SPEC §3.3
// (restore_history_export.sql): T-SQL for SQL Server 2008 R2 and later that a
// DBA runs against msdb with sqlcmd, SSMS or Invoke-Sqlcmd to produce the CSV
// that Parse reads. Its header comment says how to run it.
//
//go:embed restore_history_export.sql
var ExportSQL string
