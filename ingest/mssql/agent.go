package mssql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/ingest/messages"
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
			// The step's text goes through the client-output parser, which
			// knows Agent's "[SQLSTATE 01000] (Message 3014)" markers, their
			// localised forms and failed statements (3013).
			dur := agentDuration(runDur)
			sink := &stepSink{res: res, upper: float64(dur), origin: store.Origin{Source: "agent",
				File: s.inst.Name + " job " + job.String + " step " + stepName.String, Line: int(id)}}
			_, err := messages.Parse(ctx, strings.NewReader(msg.String), messages.Options{
				File: "sysjobhistory", Instance: s.inst.Name, At: start.Add(time.Duration(dur) * time.Second)}, sink)
			return err
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

// stepSink turns what ingest/messages made of one step's text into Agent
// records: the step's duration bounds each restore from above, and the
// offset is left to the warehouse's timeline of the instance, since the
// step's date may lie in another daylight-saving period than today.
type stepSink struct {
	res    *AgentResult
	origin store.Origin
	upper  float64
}

// History implements store.Sink; step text holds no history rows.
func (k *stepSink) History(store.HistoryRow) error { return nil }

// Host implements store.Sink; step text holds no host facts.
func (k *stepSink) Host(store.HostSnapshot) error { return nil }

// BackupSet implements store.Sink; step text holds no backup sets.
func (k *stepSink) BackupSet(store.BackupSet) error { return nil }

// Reject implements store.Sink: a 3014 line without a database counts as skipped.
func (k *stepSink) Reject(store.Reject) { k.res.Skipped++ }

// LogRestore implements store.Sink.
func (k *stepSink) LogRestore(l store.LogRestore) error {
	l.UpperBoundS, l.UTCOffset, l.Origin = k.upper, nil, k.origin
	k.res.Restores = append(k.res.Restores, l)
	return nil
}
