package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/human"
	"github.com/restorewatch/restorewatch/web/view"
)

func (s *Server) handleRestore(c echo.Context) error {
	id, err := parseID(c, "id")
	if err != nil {
		return err
	}
	d, err := s.db.GetRestoreDetail(c.Request().Context(), id)
	if err != nil {
		return err
	}
	m := s.restoreDetail(d)
	if m.Findings, err = s.restoreFindings(c.Request().Context(), &d.Restore); err != nil {
		return err
	}
	if d.StartedLocal != nil {
		// The collector's curve starts at the statement's start_time, which
		// the restore's other sources know to a few seconds.
		cv, err := s.db.InflightCurveFor(c.Request().Context(), d.Instance, d.Database, *d.StartedLocal, 2*time.Minute)
		switch {
		case err == nil && cv.Ended:
			f, err := analysis.NewCurveFacts(s.db).Of(c.Request().Context(), *cv)
			if err != nil {
				return err
			}
			lr := s.liveRestore(*cv, f, s.cfg.Now(), "restore-progress")
			m.Progress = &lr
		case err != nil && store.ErrorCode(err) != store.ENOTFOUND:
			return err
		}
	}
	return s.render(c, http.StatusOK, view.RestorePage(s.page(c, m.Title, "restores"), m))
}

// restoreFindings are the open or acknowledged regressions of the
// restore's series that it ran after, so that a slow restore's page leads
// to the evidence of why and to the known issue that explains it.
func (s *Server) restoreFindings(ctx context.Context, r *store.Restore) ([]view.RestoreFinding, error) {
	regs, err := s.db.ListRegressions(ctx, store.RegressionFilter{Instance: r.Instance, Database: r.Database, Status: "active"})
	if err != nil {
		return nil, err
	}
	var out []view.RestoreFinding
	for _, g := range regs {
		if g.Kind != r.Kind || g.Instance != r.Instance || g.Database != r.Database || r.At.Before(g.ChangedAt) {
			continue
		}
		f := view.RestoreFinding{URL: view.RegressionURL(g.ID), Text: fmt.Sprintf("Regression %d: since %s, %s restores of %s run %s than before",
			g.ID, view.Date(g.ChangedAt), g.Kind, g.Database, human.Change(g.Ratio))}
		for _, id := range g.KnownIssues {
			f.Issues = append(f.Issues, view.Link{Text: id + ": " + s.issue(id).Title, Href: view.RegressionURL(g.ID) + "#known"})
		}
		out = append(out, f)
	}
	return out, nil
}

// durationSources say in words where a duration came from (SPEC §4).
var durationSources = map[string]string{
	store.DurationEngine:     "the engine's own seconds (message 3014)",
	store.DurationCompletion: "completion line minus restore_date, measured to be the start on this instance",
	store.DurationDbatools:   "dbatools' FileRestoreTime around the statement (Restore-DbaDatabase): an upper bound",
	store.DurationAgent:      "an Agent job step's duration: an upper bound",
	store.DurationUnknown:    "unknown: no source measured it",
}

// throughputSources say in words what the rates were computed from.
var throughputSources = map[string]string{
	store.ThroughputDuration: "size ÷ duration",
	store.ThroughputEngine:   "the engine's MB/sec (message 3014), finer than its seconds",
	store.ThroughputRecomputed: "recomputed from the 3014 line's pages and seconds: " +
		"its stated MB/sec disagreed with them beyond rounding (a typo in the pasted text?)",
}

// restoreDetail groups a restore's fields as a DBA reads them.
func (s *Server) restoreDetail(d *store.RestoreDetail) view.RestoreDetail {
	r := &d.Restore
	m := view.RestoreDetail{
		Title: fmt.Sprintf("%s restore of %s", r.Kind, r.Database), Instance: r.Instance, InstanceURL: view.InstanceURL(r.Instance),
		Database: r.Database, DatabaseURL: view.DatabaseURL(r.Instance, r.Database), Kind: string(r.Kind),
		SeriesURL: view.DatabaseKindURL(r.Instance, r.Database, string(r.Kind)), Devices: r.Devices, Destinations: r.DestinationFiles,
		Summary: fmt.Sprintf("Finished %s on %s; %s at %s logical.", view.Time(r.At), r.Instance,
			view.DurationPtr(r.DurationS), view.MiBpsPtr(r.LogicalMiBps)),
	}
	src := durationSources[r.DurationSource]
	if src == "" {
		src = r.DurationSource
	}
	offset := "known from the instance's sources"
	if !r.OffsetKnown {
		offset = "not stated by any source: UTC times assume offset 0 or the configured default"
	}
	m.Groups = []view.KVGroup{
		{Title: "Timing", Rows: []view.KV{
			{Key: "Started", Value: view.TimeSec(r.StartedAt)}, {Key: "Finished", Value: view.TimeSec(r.FinishedAt)},
			{Key: "Started (instance local)", Value: view.Local(d.StartedLocal)},
			{Key: "Finished (instance local)", Value: view.Local(d.FinishedLocal)},
			{Key: "restore_date (msdb, local)", Value: view.Local(d.RestoreDateLocal)},
			{Key: "Duration", Value: view.DurationPtr(r.DurationS)}, {Key: "Duration source", Value: src},
			{Key: "UTC offset", Value: offset},
		}},
		{Title: "Size and speed", Rows: []view.KV{
			{Key: "Backup size (logical)", Value: view.BytesPtr(r.BackupBytes)},
			{Key: "Compressed size (read)", Value: view.BytesPtr(r.CompressedB)},
			{Key: "Pages (message 3014)", Value: view.IntPtr(r.Pages)}, {Key: "Size from", Value: sizeSource(r.SizeSource)},
			{Key: "Logical throughput", Value: view.MiBpsPtr(r.LogicalMiBps)},
			{Key: "Read throughput", Value: view.MiBpsPtr(r.ReadMiBps)},
			{Key: "Engine's MB/sec (3014)", Value: engineMBps(r.EngineMBps)},
			{Key: "Throughput source", Value: orUnknown(throughputSources[r.ThroughputSource])},
		}},
		{Title: "Backup", Rows: []view.KV{
			{Key: "Source server", Value: orUnknown(r.SourceServer)}, {Key: "Source database", Value: orUnknown(r.SourceDatabase)},
			{Key: "Source build", Value: s.buildText(r.SourceBuild), Mono: true}, {Key: "Family", Value: orUnknown(r.Family), Mono: true},
			{Key: "Compressed", Value: view.Bool(r.Compressed, "yes", "no")}, {Key: "Encrypted", Value: view.Bool(r.Encrypted, "yes", "no")},
			{Key: "Checksum", Value: view.Bool(r.Checksum, "yes", "no")}, {Key: "Copy-only", Value: view.Bool(r.CopyOnly, "yes", "no")},
			{Key: "Device kind", Value: human.FactorValue("device_kind", r.DeviceKind)}, {Key: "Stripes", Value: view.IntPtr(r.Stripes)},
		}},
		{Title: "Instance at the time", Rows: []view.KV{
			{Key: "Instance build", Value: s.buildText(r.InstanceBuild), Mono: true},
			{Key: "Buffer count", Value: view.IntPtr(r.BufferCount)}, {Key: "Max transfer size", Value: kib(r.MaxTransferKiB)},
			{Key: "File-system I/O alignment", Value: bytesAlign(r.IOAlignment)},
			{Key: "Instant file initialisation", Value: view.Bool(r.IFI, "enabled", "disabled")},
			{Key: "CPUs", Value: view.IntPtr(r.CPUCount)}, {Key: "Memory", Value: mib(r.MemoryMB)},
			{Key: "Trace flags", Value: orUnknown(r.TraceFlags), Mono: true}, {Key: "Non-Microsoft modules", Value: orUnknown(r.Modules), Mono: true},
			{Key: "Restored by", Value: orUnknown(r.UserName)}, {Key: "Sources", Value: r.Sources},
		}},
	}
	if h := d.History; h != nil {
		m.Evidence = append(m.Evidence, view.KVGroup{Title: "msdb restorehistory (" + h.Source + ")", Rows: []view.KV{
			{Key: "Read from", Value: h.Origin, Mono: true}, {Key: "restore_history_id", Value: view.Int(h.RestoreHistoryID)},
			{Key: "restore_date", Value: view.Local(&h.RestoreDate)}, {Key: "restore_type / backup type", Value: h.RestoreType + " / " + h.BackupType},
			{Key: "Backup started (source clock)", Value: view.Local(h.BackupStart)},
			{Key: "Backup finished (source clock)", Value: view.Local(h.BackupFinish)},
			{Key: "Source machine", Value: orUnknown(h.SourceMachine)},
			{Key: "First / last LSN", Value: h.FirstLSN + " / " + h.LastLSN, Mono: true},
			{Key: "Encryption", Value: orUnknown(h.KeyAlgorithm)}, {Key: "User", Value: orUnknown(h.UserName)},
		}})
	}
	for _, l := range d.Logs {
		g := view.KVGroup{Title: "Log lines (" + l.Source + ")", Rows: []view.KV{
			{Key: "Read from", Value: l.Origin, Mono: true}, {Key: "Completed", Value: view.Local(l.Completed)},
			{Key: "Message", Value: messageText(l.MessageID)}, {Key: "Statement", Value: orUnknown(l.Statement)},
			{Key: "Device type", Value: orUnknown(l.DeviceType)},
		}}
		if l.Has3014 {
			g.Rows = append(g.Rows, view.KV{Key: "3014", Value: fmt.Sprintf("%s pages in %s (%s MB/sec)", view.IntPtr(l.Pages),
				secs(l.Seconds), engineMBps(l.MBps))})
		}
		if l.UpperBoundS != nil {
			g.Rows = append(g.Rows, view.KV{Key: "Upper bound (Agent step)", Value: view.DurationPtr(l.UpperBoundS)})
		}
		if l.Recovery != nil {
			g.Rows = append(g.Rows, view.KV{Key: "Recovery (3421)", Value: fmt.Sprintf("%d s (analysis %d ms, redo %d ms, undo %d ms)",
				l.Recovery.Seconds, l.Recovery.AnalysisMs, l.Recovery.RedoMs, l.Recovery.UndoMs)})
		}
		m.Evidence = append(m.Evidence, g)
		if b := l.Buffer; b != nil && len(m.Buffer) == 0 {
			m.Buffer = bufferRows(b)
		}
		for _, ph := range l.Phases {
			m.Phases = append(m.Phases, view.KV{Key: ph.At.Format("2006-01-02 15:04:05.000"), Value: ph.Text})
		}
	}
	return m
}

func bufferRows(b *store.BufferConfig) []view.KV {
	var rows []view.KV
	add := func(k string, v int64, unit string) {
		if v != 0 {
			rows = append(rows, view.KV{Key: k, Value: view.Int(v) + unit})
		}
	}
	add("Memory limit", b.MemoryLimitMB, " MB")
	add("Buffer count", b.BufferCount, "")
	add("Sets of buffers", b.SetsOfBuffers, "")
	add("Max transfer size", b.MaxTransferKiB, " KB")
	add("Min max transfer size", b.MinMaxTransfer, " KB")
	add("Total buffer space", b.TotalBufferKiB, " KB")
	add("Tabular data devices", b.TabularDevices, "")
	add("File-system I/O alignment", b.IOAlignment, " bytes")
	add("Media buffer count", b.MediaBufferCount, "")
	add("Media buffer size", b.MediaBufferKiB, " KB")
	add("Encode buffer count", b.EncodeBuffers, "")
	return rows
}

func (s *Server) buildText(b string) string {
	if b == "" {
		return view.Unknown
	}
	if n := s.cfg.Namer(b); n != "" {
		return b + " (" + n + ")"
	}
	return b
}

func messageText(id int) string {
	names := map[int]string{18267: "18267 database restored", 18271: "18271 differential restored",
		18268: "18268 log restored", 18269: "18269 file restored", 18277: "18277 file differential restored"}
	if n, ok := names[id]; ok {
		return n
	}
	if id == 0 {
		return "only the 3014 line"
	}
	return fmt.Sprint(id)
}

func orUnknown(s string) string {
	if strings.TrimSpace(s) == "" {
		return view.Unknown
	}
	return s
}

func engineMBps(v *float64) string {
	if v == nil {
		return view.Unknown
	}
	return fmt.Sprintf("%.3f", *v)
}

func secs(v *float64) string {
	if v == nil {
		return view.Unknown
	}
	return fmt.Sprintf("%.3f s", *v)
}

func kib(v *int64) string {
	if v == nil {
		return view.Unknown
	}
	return view.Int(*v) + " KiB"
}

func mib(v *int64) string {
	if v == nil {
		return view.Unknown
	}
	return view.Bytes(*v << 20)
}

func bytesAlign(v *int64) string {
	if v == nil {
		return view.Unknown
	}
	return view.Int(*v) + " bytes"
}

// sizeSource says where a restore's size came from in words: the raw key
// stays in the API and CSV.
func sizeSource(s string) string {
	switch s {
	case "backup_size":
		return "the backup's size in msdb (backupset.backup_size)"
	case "pages_3014":
		return "the pages the restore copied × 8 KiB (message 3014)"
	}
	return orUnknown(s)
}
