package mssqltest

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
	"github.com/restorewatch/restorewatch/store"
)

// exportMark is in the header comment of ingest/csv's published export
// query, which a DBA runs as one batch (sqlcmd -i, SSMS, Invoke-Sqlcmd).
const exportMark = "restore_history_export.sql"

var (
	exportSince = regexp.MustCompile(`(?i)DECLARE\s+@since\s+datetime\s*=\s*'([^']*)'`)
	exportQuote = regexp.MustCompile(`(?i)DECLARE\s+@quote_text\s+bit\s*=\s*([01])\b`)
)

// export answers the published export query as SQL Server would: its
// parameters read from the batch's DECLAREs, text CSV-quoted when
// @quote_text is 1, dates as CONVERT(varchar(23), ..., 121), numbers as
// decimal text, and key_algorithm NULL unless the batch's branch that reads
// it runs on this version (c).
func (in *Instance) export(sql string, c checked) ([]tdstest.ResultSet, error) {
	m, q := exportSince.FindStringSubmatch(sql), exportQuote.FindStringSubmatch(sql)
	if m == nil || q == nil {
		return nil, tdstest.Error{Number: 137, State: 2, Class: 15, Message: `Must declare the scalar variable "@since".`}
	}
	since, ok := time.Time{}, false
	for _, layout := range []string{"20060102", "2006-01-02", "20060102 15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, strings.TrimSpace(m[1])); err == nil {
			since, ok = t, true
			break
		}
	}
	if !ok {
		return nil, tdstest.Error{Number: 241, State: 1, Class: 16, Message: "Conversion failed when converting date and/or time from character string."}
	}
	quote := q[1] == "1"
	text := func(s string) any {
		if s == "" {
			return nil
		}
		if quote {
			return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
		return s
	}
	list := func(paths []string) any {
		s := strings.Join(paths, "|")
		if r := []rune(s); len(r) > 3998 {
			s = string(r[:3998])
		}
		return text(s)
	}
	keyAlg := c.selects("msdb.dbo.backupset", "key_algorithm")
	nvText := func(n int) tdstest.Column { return col("", tdstest.NVarChar, n) }
	named := func(c tdstest.Column, name string) tdstest.Column { c.Name = name; return c }
	rs := tdstest.ResultSet{Columns: []tdstest.Column{
		named(nvText(260), "instance"), col("restore_history_id", tdstest.Int, 0), col("restore_date", tdstest.VarChar, 23),
		named(nvText(258), "destination_database_name"), named(nvText(258), "user_name"), col("restore_type", tdstest.Char, 1),
		col("replace", tdstest.TinyInt, 0), col("recovery", tdstest.TinyInt, 0), col("stop_at", tdstest.VarChar, 23),
		col("device_count", tdstest.TinyInt, 0), col("backup_set_uuid", tdstest.Char, 36), col("family_guid", tdstest.Char, 36),
		named(nvText(258), "source_server_name"), named(nvText(258), "source_machine_name"),
		named(nvText(258), "source_database_name"), col("backup_type", tdstest.Char, 1),
		col("backup_start_date", tdstest.VarChar, 23), col("backup_finish_date", tdstest.VarChar, 23),
		col("first_lsn", tdstest.VarChar, 25), col("last_lsn", tdstest.VarChar, 25), col("backup_size", tdstest.VarChar, 20),
		col("compressed_backup_size", tdstest.VarChar, 20), col("software_major_version", tdstest.TinyInt, 0),
		col("software_minor_version", tdstest.TinyInt, 0), col("software_build_version", tdstest.SmallInt, 0),
		col("is_copy_only", tdstest.TinyInt, 0), col("has_backup_checksums", tdstest.TinyInt, 0),
		named(nvText(66), "key_algorithm"), col("media_family_count", tdstest.TinyInt, 0), col("device_type", tdstest.TinyInt, 0),
		named(nvText(4000), "physical_device_names"), named(nvText(4000), "destination_files"),
	}}
	rows := append([]store.HistoryRow(nil), in.history...)
	for i := 1; i < len(rows); i++ { // ORDER BY rh.restore_history_id
		for j := i; j > 0 && rows[j].RestoreHistoryID < rows[j-1].RestoreHistoryID; j-- {
			rows[j], rows[j-1] = rows[j-1], rows[j]
		}
	}
	for _, r := range rows {
		if roundDatetime(r.RestoreDate).Before(since) {
			continue
		}
		alg := text(r.KeyAlgorithm)
		if !keyAlg {
			alg = nil
		}
		rs.Rows = append(rs.Rows, []any{text(in.name), r.RestoreHistoryID, dt121(&r.RestoreDate), text(r.Database),
			text(r.UserName), nv(r.RestoreType), tiny(r.Replace), tiny(r.Recovery), dt121(r.StopAt), deref(r.DeviceCount),
			nv(r.BackupSetUUID), nv(r.FamilyGUID), text(r.SourceServer), text(r.SourceMachine), text(r.SourceDatabase),
			nv(r.BackupType), dt121(r.BackupStart), dt121(r.BackupFinish), nv(r.FirstLSN), nv(r.LastLSN),
			decimal(r.BackupSize), decimal(r.CompressedSize), deref(r.SoftwareMajor), deref(r.SoftwareMinor),
			deref(r.SoftwareBuild), tiny(r.IsCopyOnly), tiny(r.HasChecksums), alg, deref(r.MediaFamilies),
			deref(r.DeviceType), list(r.Devices), list(r.DestinationFiles)})
	}
	return []tdstest.ResultSet{rs}, nil
}

// dt121 is CONVERT(varchar(23), t, 121) of a datetime.
func dt121(t *time.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return roundDatetime(*t).Format("2006-01-02 15:04:05.000")
}

// tiny is CONVERT(tinyint, bit).
func tiny(b *bool) any {
	switch {
	case b == nil:
		return nil
	case *b:
		return 1
	}
	return 0
}

// decimal is CONVERT(varchar(20), numeric(20,0)).
func decimal(v *int64) any {
	if v == nil {
		return nil
	}
	return strconv.FormatInt(*v, 10)
}
