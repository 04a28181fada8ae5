package mssql

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// AgentMark is the Agent source's watermark: the last sysjobhistory
// instance_id looked at (matching or not).
type AgentMark struct {
	ID int64 `json:"id"`
}

// AgentResult is one pass of the Agent source.
type AgentResult struct {
	Restores []store.LogRestore
	Steps    int // job steps read
	Skipped  int // 3014 lines whose database the step text does not name
	Mark     AgentMark
	Rebuilt  string // why the watermark was dropped; ""
	More     bool
}

// AgentBatch is the TOP (@batch) of one Agent query.
const AgentBatch = 1000

// Agent reads Agent job steps after mark whose output holds 3014 lines.
func (s *Session) Agent(ctx context.Context, mark AgentMark, maxRows int) (*AgentResult, error) {
	var minID, maxID sql.NullInt64
	if err := s.each(ctx, SourceAgent, "agent_history/check", nil,
		func(r *sql.Rows) error { return r.Scan(&minID, &maxID) }); err != nil {
		return nil, err
	}
	res := &AgentResult{Mark: mark}
	if !maxID.Valid {
		return res, nil
	}
	if maxID.Int64 < mark.ID {
		res.Rebuilt = fmt.Sprintf("msdb rebuilt: sysjobhistory's highest instance_id is %d, below the watermark %d", maxID.Int64, mark.ID)
		res.Mark = AgentMark{}
	}
	for {
		batch := min(AgentBatch, maxRows-res.Steps)
		if batch <= 0 {
			res.More = true
			return res, nil
		}
		n := 0
		args := []any{sql.Named("watermark", res.Mark.ID), sql.Named("upto", maxID.Int64), sql.Named("batch", batch)}
		err := s.each(ctx, SourceAgent, "agent_history/rows", args, func(r *sql.Rows) error {
			var id, step, status, runDate, runTime, runDur int64
			var job, stepName, msg sql.NullString
			if err := r.Scan(&id, &job, &step, &stepName, &status, &runDate, &runTime, &runDur, &msg); err != nil {
				return err
			}
			n++
			res.Steps++
			res.Mark.ID = id
			if status != 1 {
				return nil // a failed step's 3014 lines are of restores that then failed
			}
			start, ok := agentTime(runDate, runTime)
			if !ok {
				return nil
			}
			dur := agentDuration(runDur)
			recs, skipped := agentRestores(msg.String)
			res.Skipped += skipped
			for i := range recs {
				l := &recs[i]
				l.Instance, l.CompletedAt, l.UpperBoundS = s.inst.Name, start.Add(time.Duration(dur)*time.Second), float64(dur)
				l.Origin = store.Origin{Source: "agent", File: s.inst.Name + " job " + job.String + " step " + stepName.String, Line: int(id)}
				res.Restores = append(res.Restores, *l)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if n < batch {
			// Everything up to max_id has been seen, matching or not.
			res.Mark.ID = max(res.Mark.ID, maxID.Int64)
			return res, nil
		}
	}
}

// agentTime decodes run_date (yyyymmdd) and run_time (hhmmss) into local
// wall time.
func agentTime(date, tod int64) (time.Time, bool) {
	y, m, d := int(date/10000), int(date/100%100), int(date%100)
	hh, mm, ss := int(tod/10000), int(tod/100%100), int(tod%100)
	if y < 1900 || m < 1 || m > 12 || d < 1 || d > 31 || hh > 23 || mm > 59 || ss > 59 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(m), d, hh, mm, ss, 0, time.UTC)
	return t, t.Day() == d
}

// agentDuration decodes run_duration (hhmmss; 100 h and more spill into
// more digits, 1000000 = 100 h) into seconds.
func agentDuration(v int64) int64 {
	if v < 0 {
		return 0
	}
	return v/10000*3600 + v/100%100*60 + v%100
}

var (
	re3014 = regexp.MustCompile(`(RESTORE [A-Z ]+?) successfully processed (\d+) pages in (\d+(?:\.\d+)?) seconds \((\d+(?:\.\d+)?) MB/sec\)`)
	re4035 = regexp.MustCompile(`Processed \d+ pages for database '((?:[^']|'')*)'`)
)

// agentRestores finds the 3014 lines of a step's output and names each
// one's database from the "Processed N pages for database 'D'" (4035) lines
// before it; Agent prints no completion line. A 3014 line without one (cut
// by Agent's 4000-character limit) is skipped: a restore of an unknown
// database matches nothing.
func agentRestores(msg string) ([]store.LogRestore, int) {
	var out []store.LogRestore
	skipped, prev := 0, 0
	for _, m := range re3014.FindAllStringSubmatchIndex(msg, -1) {
		db := ""
		for _, d := range re4035.FindAllStringSubmatch(msg[prev:m[0]], -1) {
			db = strings.ReplaceAll(d[1], "''", "'")
		}
		prev = m[1]
		if db == "" {
			skipped++
			continue
		}
		stmt := strings.Join(strings.Fields(msg[m[2]:m[3]]), " ")
		pages, _ := strconv.ParseInt(msg[m[4]:m[5]], 10, 64)
		secs, _ := strconv.ParseFloat(msg[m[6]:m[7]], 64)
		mbps, _ := strconv.ParseFloat(msg[m[8]:m[9]], 64)
		out = append(out, store.LogRestore{Database: db, Kind: kindOfStatement(stmt), Has3014: true,
			Statement: stmt, Pages: pages, Seconds: secs, MBps: mbps})
	}
	return out, skipped
}

// kindOfStatement reads the restore kind from a 3014 statement, as the
// error-log parser does: "RESTORE DATABASE" is a full or a differential
// restore (3014 does not tell them apart).
func kindOfStatement(stmt string) store.Kind {
	u := strings.ToUpper(stmt)
	switch {
	case strings.HasPrefix(u, "RESTORE LOG"):
		return store.KindLog
	case strings.Contains(u, " PAGE"):
		return store.KindPage
	case strings.Contains(u, " FILE"):
		return store.KindFile
	}
	return store.KindFull
}
