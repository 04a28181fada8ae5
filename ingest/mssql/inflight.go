package mssql

import (
	"context"
	"database/sql"
	"regexp"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Inflight samples the restores running now (none: an empty slice).
func (s *Session) Inflight(ctx context.Context) ([]store.InflightSample, error) {
	var out []store.InflightSample
	err := s.each(ctx, SourceInflight, "inflight", nil, func(r *sql.Rows) error {
		var (
			session         int64
			start           sql.NullTime
			command, status sql.NullString
			contextDB       sql.NullString
			percent         sql.NullFloat64
			remaining       sql.NullInt64
			wait, stmt      sql.NullString
			sampled         time.Time
		)
		if err := r.Scan(&session, &start, &command, &status, &contextDB, &percent, &remaining, &wait, &stmt, &sampled); err != nil {
			return err
		}
		cmd := strings.TrimSpace(command.String)
		// HEADERONLY, FILELISTONLY, VERIFYONLY and the like read backups
		// without restoring anything.
		if !strings.HasPrefix(cmd, "RESTORE DATABASE") && !strings.HasPrefix(cmd, "RESTORE LOG") || !start.Valid {
			return nil
		}
		db := restoredDatabase(stmt.String)
		if db == "" {
			switch d := contextDB.String; strings.ToLower(d) {
			case "", "master", "msdb", "model", "tempdb":
				db = "(unknown)"
			default:
				db = d
			}
		}
		out = append(out, store.InflightSample{
			Instance: s.inst.Name, Database: db, SessionID: session, Command: cmd,
			Statement: redactStatement(stmt.String), Start: wall(start.Time), SampledAt: wall(sampled),
			UTCOffset: offsetMinutes(sampled), Percent: percent.Float64, EstRemainingMs: remaining.Int64,
			WaitType: wait.String,
		})
		return nil
	})
	return out, err
}

var (
	reRestoreTarget = regexp.MustCompile(`(?is)^\s*RESTORE\s+(?:DATABASE|LOG)\s+(\[(?:[^\]]|\]\])+\]|"(?:[^"]|"")+"|[^\s@;,(]+)`)
	rePassword      = regexp.MustCompile(`(?i)((?:MEDIA)?PASSWORD\s*=\s*)N?'(?:[^']|'')*'`)
	reComment       = regexp.MustCompile(`(?s)^(\s*(--[^\n]*\n|/\*.*?\*/))*`)
)

// restoredDatabase reads the target of "RESTORE DATABASE [x] …"; "" when the
// statement names it through a variable.
func restoredDatabase(stmt string) string {
	stmt = reComment.ReplaceAllString(stmt, "")
	m := reRestoreTarget.FindStringSubmatch(stmt)
	if m == nil {
		return ""
	}
	name := m[1]
	switch {
	case strings.HasPrefix(name, "["):
		return strings.ReplaceAll(name[1:len(name)-1], "]]", "]")
	case strings.HasPrefix(name, `"`):
		return strings.ReplaceAll(name[1:len(name)-1], `""`, `"`)
	}
	return name
}

// redactStatement removes backup passwords (WITH PASSWORD / MEDIAPASSWORD)
// from a statement before it is stored, and bounds its length.
func redactStatement(stmt string) string {
	stmt = rePassword.ReplaceAllString(stmt, "${1}'"+redacted+"'")
	stmt = strings.TrimSpace(stmt)
	if len(stmt) > 2000 {
		stmt = strings.ToValidUTF8(stmt[:2000], "") + "…"
	}
	return stmt
}
