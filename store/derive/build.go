package derive

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

// timeline answers "what did the instance look like at local time t": the
// host facts carried forward from the latest snapshot at or before t.
type timeline struct {
	at     []int64
	states []hostState
	def    *int
}

type hostState struct {
	Offset      *int
	Version     string
	IFI         sql.NullBool
	Cores, mem  sql.NullInt64
	flags, mods string
}

func newTimeline(f *Facts) *timeline {
	tl := &timeline{def: f.DefaultOffset}
	var cur hostState
	for _, h := range f.Hosts {
		if h.Offset.Valid {
			v := int(h.Offset.Int64)
			cur.Offset = &v
		}
		if h.Version != "" {
			cur.Version = h.Version
		}
		if h.IFI.Valid {
			cur.IFI = h.IFI
		}
		if h.Cores.Valid {
			cur.Cores = h.Cores
		}
		if h.Memory.Valid {
			cur.mem = h.Memory
		}
		if h.TraceFlags != "" && h.TraceFlags != "[]" {
			cur.flags = h.TraceFlags
		}
		if h.Modules != "" && h.Modules != "[]" {
			cur.mods = h.Modules
		}
		tl.at = append(tl.at, h.Observed)
		tl.states = append(tl.states, cur)
	}
	return tl
}

// state returns the host state at local time t and whether one was observed
// at or before t.
func (tl *timeline) state(t int64) (hostState, bool) {
	i := sort.Search(len(tl.at), func(i int) bool { return tl.at[i] > t })
	if i == 0 {
		return hostState{}, false
	}
	return tl.states[i-1], true
}

// offset returns the UTC offset in minutes at local time t and whether a
// source stated it: the latest stated offset at or before t, else the user's
// default, else the earliest stated offset (time zones rarely change), else 0.
func (tl *timeline) offset(t int64) (int, bool) {
	if st, ok := tl.state(t); ok && st.Offset != nil {
		return *st.Offset, true
	}
	if tl.def != nil {
		return *tl.def, true
	}
	for _, st := range tl.states {
		if st.Offset != nil {
			return *st.Offset, true
		}
	}
	return 0, false
}

const mib = 1 << 20

// build derives one restore from a history row h and/or a log restore l (with
// client output m merged into it), and the Restore-DbaDatabase row dba paired
// with h.
func build(h *History, l, m, dba *Log, semantics string, tl *timeline) *Derived {
	d := &Derived{History: h, Log: l, Client: m, Dbatools: dba}
	r := &d.Restore
	var sources []string
	if h != nil {
		d.Key = h.ID
		r.Database = h.DB
		r.Kind, _ = store.KindOfRestoreType(h.RestoreType)
		sources = append(sources, string(store.SourceHistory))
	} else {
		d.Key = -l.ID
		r.Database = l.DB
		r.Kind = l.Kind
	}
	e := engineOf(r, l, m, dba, &sources)
	durationOf(r, e, h, semantics)
	ref, ok := timesOf(d, e, h, semantics, tl)
	if !ok {
		return nil // a client message with no time and no history row: nothing to place it at
	}
	sizesOf(r, e, h)
	if h != nil {
		historyFacts(r, h)
	}
	devicesOf(r, h, l)
	hostFacts(r, tl, ref)
	r.Sources = strings.Join(dedupe(sources), "+")
	return d
}

// engineFacts are what the error log and the client output measured of a
// restore: the completion time (local) and its offset, the engine's
// seconds and pages (message 3014), and the upper bounds of an Agent job
// step and of Restore-DbaDatabase.
type engineFacts struct {
	completed *int64
	offset    *int
	seconds   float64
	pages     int64
	upper     float64 // an Agent job step's duration
	dbatools  float64 // Restore-DbaDatabase's duration
}

// engineOf reads the engine's facts from the log, else the client output,
// and dbatools' measure; it sets the stated MB/s and adds the sources.
func engineOf(r *store.Restore, l, m, dba *Log, sources *[]string) engineFacts {
	var e engineFacts
	for _, x := range []*Log{l, m} {
		if x == nil {
			continue
		}
		*sources = append(*sources, string(x.Source))
		if e.completed == nil && x.Completed.Valid {
			v := x.Completed.Int64
			e.completed = &v
			if x.Offset.Valid {
				o := int(x.Offset.Int64)
				e.offset = &o
			}
		}
		if e.seconds == 0 && x.Has3014 && x.Seconds.Float64 > 0 {
			e.seconds = x.Seconds.Float64
			e.pages = x.Pages.Int64
			if x.MBps.Valid {
				r.EngineMBps = ptr(x.MBps.Float64)
			}
		}
		if x.UpperBound.Valid && x.UpperBound.Float64 > 0 {
			e.upper = x.UpperBound.Float64
		}
	}
	if dba != nil {
		*sources = append(*sources, string(dba.Source))
		if dba.UpperBound.Valid && dba.UpperBound.Float64 > 0 {
			e.dbatools = dba.UpperBound.Float64
		}
	}
	return e
}

// durationOf sets the duration by trust (SPEC §4); zero or negative is
// unknown, never 1 s.
func durationOf(r *store.Restore, e engineFacts, h *History, semantics string) {
	r.DurationSource = store.DurationUnknown
	switch {
	case e.seconds > 0:
		r.DurationS, r.DurationSource = ptr(e.seconds), store.DurationEngine
	case e.completed != nil && h != nil && semantics == "start" && *e.completed > h.RestoreLocal:
		r.DurationS, r.DurationSource = ptr(float64(*e.completed-h.RestoreLocal)/1000), store.DurationCompletion
	case e.dbatools > 0:
		// Measured around the one statement: tighter than a job step's.
		r.DurationS, r.DurationSource = ptr(e.dbatools), store.DurationDbatools
	case e.upper > 0:
		r.DurationS, r.DurationSource = ptr(e.upper), store.DurationAgent
	}
}

// timesOf places the restore in time: when it started and finished (local
// and UTC, by the instance's offset then) and the instant it is filed at.
// It returns the local time the instance's state is read at (the start,
// else that instant); ok is false when nothing gives a time.
func timesOf(d *Derived, e engineFacts, h *History, semantics string, tl *timeline) (ref int64, ok bool) {
	r := &d.Restore
	var started, finished *int64
	switch {
	case e.completed != nil:
		finished = e.completed
	case h != nil && semantics == "end":
		finished = &h.RestoreLocal
	case h != nil && semantics == "start" && r.DurationS != nil:
		f := h.RestoreLocal + int64(*r.DurationS*1000)
		finished = &f
	}
	if finished != nil && r.DurationS != nil && r.DurationSource != store.DurationAgent && r.DurationSource != store.DurationDbatools {
		s := *finished - int64(*r.DurationS*1000)
		started = &s
	} else if h != nil && semantics == "start" {
		started = &h.RestoreLocal
	}
	var atLocal int64
	switch {
	case finished != nil:
		atLocal = *finished
	case started != nil:
		atLocal = *started
	case h != nil:
		atLocal = h.RestoreLocal
	default:
		return 0, false
	}
	off, known := 0, false
	if e.offset != nil {
		off, known = *e.offset, true
	} else {
		off, known = tl.offset(atLocal)
	}
	toUTC := func(v int64) int64 { return v - int64(off)*60_000 }
	r.OffsetKnown = known
	d.AtUTC = toUTC(atLocal)
	ref = atLocal
	if started != nil {
		d.StartedUTC, d.StartedLocal = toUTC(*started), *started
		ref = *started
	}
	if finished != nil {
		d.FinishedUTC, d.FinishedLocal = toUTC(*finished), *finished
	}
	if h != nil {
		d.RestoreDateLocal = h.RestoreLocal
	}
	return ref, true
}

// sizesOf sets the sizes — the backup set's, counted once whatever the
// stripes, else the pages of message 3014 — and the throughput they give.
func sizesOf(r *store.Restore, e engineFacts, h *History) {
	if h != nil && h.BackupSize.Valid {
		r.BackupBytes = ptr(h.BackupSize.Int64)
		r.SizeSource = "backup_size"
		if h.Compressed.Valid {
			r.CompressedB = ptr(h.Compressed.Int64)
		}
	}
	if e.pages > 0 {
		r.Pages = ptr(e.pages)
	}
	if r.DurationS == nil || *r.DurationS <= 0 {
		return
	}
	// The time throughput divides by: the engine's, as its MB/sec implies,
	// when that is the more precise (ThroughputEngine).
	elapsed, src := *r.DurationS, store.ThroughputDuration
	switch {
	case r.DurationSource != store.DurationEngine || e.pages <= 0 || r.EngineMBps == nil:
	case !store.EngineRateAgrees(e.pages, e.seconds, *r.EngineMBps):
		// The stated MB/sec is not what its own pages and seconds give (a
		// typo in a pasted line): the computed figure holds.
		src = store.ThroughputRecomputed
	case *r.EngineMBps > e.seconds:
		elapsed, src = float64(e.pages)*8192/mib / *r.EngineMBps, store.ThroughputEngine
	}
	switch {
	case r.BackupBytes != nil && *r.BackupBytes > 0:
		r.LogicalMiBps = ptr(float64(*r.BackupBytes) / mib / elapsed)
	case e.pages > 0:
		r.LogicalMiBps = ptr(float64(e.pages) * 8192 / mib / elapsed)
		if src == store.ThroughputEngine {
			r.LogicalMiBps = ptr(*r.EngineMBps) // the same, without the round trip
		}
		r.SizeSource = "pages_3014"
	}
	if r.CompressedB != nil && *r.CompressedB > 0 {
		r.ReadMiBps = ptr(float64(*r.CompressedB) / mib / elapsed)
	}
	if r.LogicalMiBps != nil || r.ReadMiBps != nil {
		r.ThroughputSource = src
	}
}

// historyFacts sets what msdb's row says of the backup: its source server,
// database and build, family, compression, encryption, checksum, copy-only,
// user and destination files.
func historyFacts(r *store.Restore, h *History) {
	r.SourceServer = h.SourceServer
	r.SourceDatabase = h.SourceDB
	if h.Major.Valid && h.Minor.Valid && h.Build.Valid {
		r.SourceBuild = fmt.Sprintf("%d.%d.%d", h.Major.Int64, h.Minor.Int64, h.Build.Int64)
	}
	switch {
	case h.Family != "":
		r.Family = strings.ToLower(h.Family)
	case h.SourceServer != "" && h.SourceDB != "":
		r.Family = strings.ToLower(h.SourceServer + "/" + h.SourceDB)
	}
	if h.BackupSize.Valid {
		// A NULL compressed size is what an upgraded msdb leaves for an
		// uncompressed backup (reference §1.4).
		r.Compressed = ptr(h.Compressed.Valid && h.Compressed.Int64 > 0 && h.Compressed.Int64 < h.BackupSize.Int64)
	}
	if h.KeyAlgorithm != "" {
		r.Encrypted = ptr(!strings.EqualFold(h.KeyAlgorithm, "NO_Encryption"))
	} else if h.BackupSize.Valid {
		r.Encrypted = ptr(false)
	}
	if h.Checksums.Valid {
		r.Checksum = ptr(h.Checksums.Bool)
	}
	if h.CopyOnly.Valid {
		r.CopyOnly = ptr(h.CopyOnly.Bool)
	}
	r.UserName = h.User
	r.DestinationFiles = h.Destinations
}

// devicesOf sets the devices, their kind and stripes, and the buffer
// settings of trace flag 3213. The error log names what this restore read;
// msdb's physical_device_name may be the backup's original destination.
func devicesOf(r *store.Restore, h *History, l *Log) {
	var devType string
	var hDevType sql.NullInt64
	switch {
	case l != nil && len(l.Devices) > 0:
		r.Devices, devType = l.Devices, l.DeviceType
	case h != nil:
		r.Devices = h.Devices
		hDevType = h.DeviceType
	}
	if h != nil && !hDevType.Valid {
		hDevType = h.DeviceType
	}
	r.DeviceKind = store.DeviceKindOf(r.Devices, devType, hDevType)
	switch {
	case h != nil && h.MediaFamilies.Valid:
		r.Stripes = ptr(h.MediaFamilies.Int64)
	case l != nil && l.DeviceCount.Valid:
		r.Stripes = ptr(l.DeviceCount.Int64)
	case h != nil && h.DeviceCount.Valid:
		r.Stripes = ptr(h.DeviceCount.Int64)
	case len(r.Devices) > 0:
		r.Stripes = ptr(int64(len(r.Devices)))
	}
	if l != nil && l.Buffer != nil {
		b := l.Buffer
		if b.BufferCount > 0 {
			r.BufferCount = ptr(b.BufferCount)
		}
		if b.MaxTransferKiB > 0 {
			r.MaxTransferKiB = ptr(b.MaxTransferKiB)
		}
		if b.IOAlignment > 0 {
			r.IOAlignment = ptr(b.IOAlignment)
		}
	}
}

// hostFacts sets what the instance was when the restore started (ref,
// local): its build, IFI, cores, memory, trace flags and modules.
func hostFacts(r *store.Restore, tl *timeline, ref int64) {
	st, ok := tl.state(ref)
	if !ok {
		return
	}
	r.InstanceBuild = st.Version
	if st.IFI.Valid {
		r.IFI = ptr(st.IFI.Bool)
	}
	if st.Cores.Valid {
		r.CPUCount = ptr(st.Cores.Int64)
	}
	if st.mem.Valid {
		r.MemoryMB = ptr(st.mem.Int64)
	}
	r.TraceFlags = canonList(st.flags)
	r.Modules = canonList(st.mods)
}

// canonList turns a JSON list of values into a stable comma list ("1117,3226").
func canonList(js string) string {
	if js == "" || js == "[]" {
		return ""
	}
	var vals []any
	if json.Unmarshal([]byte(js), &vals) != nil {
		return ""
	}
	s := make([]string, 0, len(vals))
	for _, v := range vals {
		s = append(s, fmt.Sprint(v))
	}
	sort.Strings(s)
	return strings.Join(dedupe(s), ",")
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0:0]
	for _, v := range s {
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }
