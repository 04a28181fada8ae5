package mssqltest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
	"github.com/restorewatch/restorewatch/store"
)

// Handle answers one query of the collector (tdstest.Handler).
func (in *Instance) Handle(ctx context.Context, q tdstest.Query) ([]tdstest.ResultSet, error) {
	name := mssql.QueryName(q.SQL)
	in.mu.Lock()
	in.calls[name]++
	ferr, delay := in.fail[name], in.delay[name]+in.delay[""]
	in.mu.Unlock()
	if delay > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
	if ferr != nil {
		return nil, ferr
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	b := in.check(q.SQL)
	if b.err != nil {
		return nil, b.err
	}
	if name == "" && strings.Contains(q.SQL, exportMark) {
		return in.export(q.SQL, b)
	}
	p := params(q)
	switch name {
	case "restore_history/check":
		return in.historyCheck(p.int("@watermark")), nil
	case "restore_history/rows":
		return in.historyRows(p.int("@watermark"), p.int("@upto"), p.int("@batch"),
			b.selects("msdb.dbo.backupset", "key_algorithm")), nil
	case "errorlog/archives":
		return in.archives(), nil
	case "errorlog/read":
		return in.readLog(int(p.int("@lognum")), p.time("@since"), p.time("@until"))
	case "agent_history/check":
		return in.agentCheck(), nil
	case "agent_history/rows":
		return in.agentRows(p.int("@watermark"), p.int("@upto"), p.int("@batch")), nil
	case "inflight":
		return in.inflight(), nil
	case "cms":
		rs := tdstest.ResultSet{Columns: []tdstest.Column{col("name", tdstest.NVarChar, 128),
			col("server_name", tdstest.NVarChar, 128), col("group_path", tdstest.NVarChar, 4000)}}
		for _, r := range in.registered {
			rs.Rows = append(rs.Rows, []any{r.Name, r.Server, r.Group})
		}
		return []tdstest.ResultSet{rs}, nil
	}
	if strings.HasPrefix(name, "host/") {
		return in.hostPart(name, b)
	}
	if strings.HasPrefix(name, "backup_history/") {
		return in.backupPart(name, p)
	}
	return nil, tdstest.Error{Number: 2812, Message: fmt.Sprintf("Could not find stored procedure '%.40s'.", q.SQL)}
}

type paramSet map[string]any

func params(q tdstest.Query) paramSet {
	p := paramSet{}
	for _, x := range q.Params {
		p[x.Name] = x.Value
	}
	return p
}

func (p paramSet) int(name string) int64 {
	v, _ := p[name].(int64)
	return v
}

func (p paramSet) time(name string) time.Time {
	v, _ := p[name].(time.Time)
	return v
}

func col(name string, t tdstest.ColType, size int) tdstest.Column {
	return tdstest.Column{Name: name, Type: t, Size: size}
}

func numeric(name string, prec uint8) tdstest.Column {
	return tdstest.Column{Name: name, Type: tdstest.Numeric, Precision: prec}
}

// nv turns "" into NULL, as msdb's nullable text columns hold it.
func nv(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func (in *Instance) historyCheck(wm int64) []tdstest.ResultSet {
	rs := tdstest.ResultSet{Columns: []tdstest.Column{col("min_id", tdstest.Int, 0), col("max_id", tdstest.Int, 0),
		col("watermark_date", tdstest.DateTime, 0)}}
	var lo, hi, at any
	for _, r := range in.history {
		if lo == nil || r.RestoreHistoryID < lo.(int64) {
			lo = r.RestoreHistoryID
		}
		if hi == nil || r.RestoreHistoryID > hi.(int64) {
			hi = r.RestoreHistoryID
		}
		if r.RestoreHistoryID == wm {
			at = r.RestoreDate
		}
	}
	rs.Rows = [][]any{{lo, hi, at}}
	return []tdstest.ResultSet{rs}
}

var historyColumns = []tdstest.Column{
	col("restore_history_id", tdstest.Int, 0), col("restore_date", tdstest.DateTime, 0),
	col("destination_database_name", tdstest.NVarChar, 128), col("user_name", tdstest.NVarChar, 128),
	col("restore_type", tdstest.Char, 1), col("replace", tdstest.Bit, 0), col("recovery", tdstest.Bit, 0),
	col("stop_at", tdstest.DateTime, 0), col("device_count", tdstest.TinyInt, 0),
	col("backup_set_uuid", tdstest.UniqueIdentifier, 0), col("family_guid", tdstest.UniqueIdentifier, 0),
	col("source_server_name", tdstest.NVarChar, 128), col("source_machine_name", tdstest.NVarChar, 128),
	col("source_database_name", tdstest.NVarChar, 128), col("backup_type", tdstest.Char, 1),
	col("backup_start_date", tdstest.DateTime, 0), col("backup_finish_date", tdstest.DateTime, 0),
	numeric("first_lsn", 25), numeric("last_lsn", 25), numeric("backup_size", 20), numeric("compressed_backup_size", 20),
	col("software_major_version", tdstest.TinyInt, 0), col("software_minor_version", tdstest.TinyInt, 0),
	col("software_build_version", tdstest.SmallInt, 0), col("is_copy_only", tdstest.Bit, 0),
	col("has_backup_checksums", tdstest.Bit, 0), col("key_algorithm", tdstest.NVarChar, 32),
	col("media_family_count", tdstest.TinyInt, 0), col("device_type", tdstest.TinyInt, 0),
	col("physical_device_names", tdstest.NVarChar, tdstest.Max),
	col("destination_files", tdstest.NVarChar, tdstest.Max),
}

// historyRows answers the rows query; without keyAlg (the query the
// server's version gets selects NULL for it) key_algorithm is NULL.
func (in *Instance) historyRows(wm, upto, batch int64, keyAlg bool) []tdstest.ResultSet {
	rs := tdstest.ResultSet{Columns: historyColumns}
	for _, r := range in.history {
		if r.RestoreHistoryID <= wm || r.RestoreHistoryID > upto || int64(len(rs.Rows)) >= batch {
			continue
		}
		var lsn1, lsn2 any
		if r.FirstLSN != "" {
			lsn1 = r.FirstLSN
		}
		if r.LastLSN != "" {
			lsn2 = r.LastLSN
		}
		alg := nv(r.KeyAlgorithm)
		if !keyAlg {
			alg = nil
		}
		rs.Rows = append(rs.Rows, []any{r.RestoreHistoryID, r.RestoreDate, r.Database, nv(r.UserName), nv(r.RestoreType),
			deref(r.Replace), deref(r.Recovery), deref(r.StopAt), deref(r.DeviceCount), nv(r.BackupSetUUID),
			nv(r.FamilyGUID), nv(r.SourceServer), nv(r.SourceMachine), nv(r.SourceDatabase), nv(r.BackupType),
			deref(r.BackupStart), deref(r.BackupFinish), lsn1, lsn2, deref(r.BackupSize), deref(r.CompressedSize),
			deref(r.SoftwareMajor), deref(r.SoftwareMinor), deref(r.SoftwareBuild), deref(r.IsCopyOnly),
			deref(r.HasChecksums), alg, deref(r.MediaFamilies), deref(r.DeviceType),
			nv(strings.Join(r.Devices, "|")), nv(strings.Join(r.DestinationFiles, "|"))})
	}
	return []tdstest.ResultSet{rs}
}

func (in *Instance) archives() []tdstest.ResultSet {
	rs := tdstest.ResultSet{Columns: []tdstest.Column{col("Archive #", tdstest.Int, 0), col("Date", tdstest.DateTime, 0),
		col("Log File Size (Byte)", tdstest.Int, 0)}}
	for i, l := range in.logs {
		date := in.now()
		if i > 0 && len(l) > 0 {
			date = l[len(l)-1].At
		}
		size := 0
		for _, r := range l {
			size += 60 + 2*len(r.Text)
		}
		rs.Rows = append(rs.Rows, []any{i, date.Truncate(time.Minute), size})
	}
	return []tdstest.ResultSet{rs}
}

func (in *Instance) readLog(num int, since, until time.Time) ([]tdstest.ResultSet, error) {
	if num < 0 || num >= len(in.logs) {
		return nil, tdstest.Error{Number: 22004, Message: "xp_readerrorlog() returned error 2, 'The system cannot find the file specified.'"}
	}
	rs := tdstest.ResultSet{Columns: []tdstest.Column{col("LogDate", tdstest.DateTime, 0),
		col("ProcessInfo", tdstest.NVarChar, 50), col("Text", tdstest.NVarChar, tdstest.Max)}}
	for _, r := range in.logs[num] {
		// LogDate is a datetime: compare as SQL Server would, after rounding.
		at := roundDatetime(r.At)
		if (!since.IsZero() && at.Before(since)) || (!until.IsZero() && at.After(until)) {
			continue
		}
		rs.Rows = append(rs.Rows, []any{r.At, r.Source, r.Text})
	}
	return []tdstest.ResultSet{rs}, nil
}

// roundDatetime rounds to datetime's 1/300 s ticks.
func roundDatetime(t time.Time) time.Time {
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
	ticks := (t.Sub(day).Nanoseconds()*3 + 5_000_000) / 10_000_000
	return day.Add(time.Duration(ticks * 10_000_000 / 3))
}

func (in *Instance) agentCheck() []tdstest.ResultSet {
	rs := tdstest.ResultSet{Columns: []tdstest.Column{col("min_id", tdstest.Int, 0), col("max_id", tdstest.Int, 0)}}
	var lo, hi any
	if n := len(in.agent); n > 0 {
		lo, hi = in.agent[0].ID, in.agent[n-1].ID
	}
	rs.Rows = [][]any{{lo, hi}}
	return []tdstest.ResultSet{rs}
}

func (in *Instance) agentRows(wm, upto, batch int64) []tdstest.ResultSet {
	rs := tdstest.ResultSet{Columns: []tdstest.Column{col("instance_id", tdstest.Int, 0), col("job_name", tdstest.NVarChar, 128),
		col("step_id", tdstest.Int, 0), col("step_name", tdstest.NVarChar, 128), col("run_status", tdstest.Int, 0),
		col("run_date", tdstest.Int, 0), col("run_time", tdstest.Int, 0), col("run_duration", tdstest.Int, 0),
		col("message", tdstest.NVarChar, 4000)}}
	for _, s := range in.agent {
		u := strings.ToUpper(s.Message)
		if s.ID <= wm || s.ID > upto || s.StepID == 0 || int64(len(rs.Rows)) >= batch ||
			!strings.Contains(u, "SUCCESSFULLY PROCESSED") || !strings.Contains(u, "RESTORE") {
			continue
		}
		rs.Rows = append(rs.Rows, []any{s.ID, s.Job, s.StepID, s.Step, s.Status, s.RunDate, s.RunTime, s.RunDurHMS, s.Message})
	}
	return []tdstest.ResultSet{rs}
}

func (in *Instance) inflight() []tdstest.ResultSet {
	rs := tdstest.ResultSet{Columns: []tdstest.Column{col("session_id", tdstest.SmallInt, 0), col("start_time", tdstest.DateTime, 0),
		col("command", tdstest.NVarChar, 32), col("status", tdstest.NVarChar, 30), col("context_database", tdstest.NVarChar, 128),
		col("percent_complete", tdstest.Real, 0), col("estimated_completion_time", tdstest.BigInt, 0),
		col("wait_type", tdstest.NVarChar, 60), col("statement_text", tdstest.NVarChar, tdstest.Max),
		col("sampled_at", tdstest.DateTimeOffset, 0)}}
	now := in.sysdatetimeoffset()
	for _, r := range in.running {
		ctxDB := r.ContextDB
		if ctxDB == "" {
			ctxDB = "master"
		}
		rs.Rows = append(rs.Rows, []any{r.SessionID, r.Start, r.Command, "suspended", ctxDB, float32(r.Percent), r.EstMs,
			nv(r.WaitType), r.Statement, now})
	}
	return []tdstest.ResultSet{rs}
}

// sysdatetimeoffset is the server clock with its offset.
func (in *Instance) sysdatetimeoffset() time.Time {
	w := in.now()
	zone := time.FixedZone("", in.offset*60)
	return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), zone)
}

// HistoryRows returns a copy of the scripted restorehistory rows.
func (in *Instance) HistoryRows() []store.HistoryRow {
	defer in.lock()()
	return append([]store.HistoryRow(nil), in.history...)
}
