package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// timeline answers "what did the instance look like at local time t": the
// host facts carried forward from the latest snapshot at or before t.
type timeline struct {
	at     []int64
	states []hostState
	def    *int
}

type hostState struct {
	offset      *int
	version     string
	ifi         sql.NullBool
	cores, mem  sql.NullInt64
	flags, mods string
}

func newTimeline(f *facts) *timeline {
	tl := &timeline{def: f.defaultOffset}
	var cur hostState
	for _, h := range f.hosts {
		if h.offset.Valid {
			v := int(h.offset.Int64)
			cur.offset = &v
		}
		if h.version != "" {
			cur.version = h.version
		}
		if h.ifi.Valid {
			cur.ifi = h.ifi
		}
		if h.cores.Valid {
			cur.cores = h.cores
		}
		if h.memory.Valid {
			cur.mem = h.memory
		}
		if h.traceFlags != "" && h.traceFlags != "[]" {
			cur.flags = h.traceFlags
		}
		if h.modules != "" && h.modules != "[]" {
			cur.mods = h.modules
		}
		tl.at = append(tl.at, h.observed)
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
	if st, ok := tl.state(t); ok && st.offset != nil {
		return *st.offset, true
	}
	if tl.def != nil {
		return *tl.def, true
	}
	for _, st := range tl.states {
		if st.offset != nil {
			return *st.offset, true
		}
	}
	return 0, false
}

const mib = 1 << 20

// build derives one restore from a history row h and/or a log restore l (with
// client output m merged into it), and the Restore-DbaDatabase row dba paired
// with h.
func build(h *histFact, l, m, dba *logFact, semantics string, tl *timeline) *derivedRestore {
	d := &derivedRestore{h: h, l: l, m: m, x: dba}
	r := &d.r
	var sources []string
	if h != nil {
		d.key = h.id
		r.Database = h.db
		r.Kind, _ = KindOfRestoreType(h.rtype)
		sources = append(sources, string(SourceHistory))
	} else {
		d.key = -l.id
		r.Database = l.db
		r.Kind = l.kind
	}
	// Engine seconds and completion time, from the log, else the client output.
	var completed *int64
	var offset *int
	var seconds float64
	var pages int64
	var upper float64
	for _, x := range []*logFact{l, m} {
		if x == nil {
			continue
		}
		sources = append(sources, string(x.source))
		if completed == nil && x.completed.Valid {
			v := x.completed.Int64
			completed = &v
			if x.offset.Valid {
				o := int(x.offset.Int64)
				offset = &o
			}
		}
		if seconds == 0 && x.has3014 && x.seconds.Float64 > 0 {
			seconds = x.seconds.Float64
			pages = x.pages.Int64
			if x.mbps.Valid {
				r.EngineMBps = ptr(x.mbps.Float64)
			}
		}
		if x.upper.Valid && x.upper.Float64 > 0 {
			upper = x.upper.Float64
		}
	}
	var dbatoolsS float64
	if dba != nil {
		sources = append(sources, string(dba.source))
		if dba.upper.Valid && dba.upper.Float64 > 0 {
			dbatoolsS = dba.upper.Float64
		}
	}
	// Duration by trust (SPEC §4); zero or negative is unknown, never 1 s.
	r.DurationSource = DurationUnknown
	switch {
	case seconds > 0:
		r.DurationS, r.DurationSource = ptr(seconds), DurationEngine
	case completed != nil && h != nil && semantics == "start" && *completed > h.restore:
		r.DurationS, r.DurationSource = ptr(float64(*completed-h.restore)/1000), DurationCompletion
	case dbatoolsS > 0:
		// Measured around the one statement: tighter than a job step's.
		r.DurationS, r.DurationSource = ptr(dbatoolsS), DurationDbatools
	case upper > 0:
		r.DurationS, r.DurationSource = ptr(upper), DurationAgent
	}
	var started, finished *int64
	switch {
	case completed != nil:
		finished = completed
	case h != nil && semantics == "end":
		finished = &h.restore
	case h != nil && semantics == "start" && r.DurationS != nil:
		f := h.restore + int64(*r.DurationS*1000)
		finished = &f
	}
	if finished != nil && r.DurationS != nil && r.DurationSource != DurationAgent && r.DurationSource != DurationDbatools {
		s := *finished - int64(*r.DurationS*1000)
		started = &s
	} else if h != nil && semantics == "start" {
		started = &h.restore
	}
	var atLocal int64
	switch {
	case finished != nil:
		atLocal = *finished
	case started != nil:
		atLocal = *started
	case h != nil:
		atLocal = h.restore
	default:
		return nil // a client message with no time and no history row: nothing to place it at
	}
	off, known := 0, false
	if offset != nil {
		off, known = *offset, true
	} else {
		off, known = tl.offset(atLocal)
	}
	toUTC := func(v int64) int64 { return v - int64(off)*60_000 }
	r.OffsetKnown = known
	d.utcS = toUTC(atLocal)
	if started != nil {
		d.startedUTC, d.startedLocal = toUTC(*started), *started
	}
	if finished != nil {
		d.finishedUTC, d.finishedLocal = toUTC(*finished), *finished
	}
	if h != nil {
		d.restoreDateLocal = h.restore
	}
	// Sizes: the backup set's sizes, counted once whatever the stripes.
	if h != nil && h.backupSize.Valid {
		r.BackupBytes = ptr(h.backupSize.Int64)
		r.SizeSource = "backup_size"
		if h.compressed.Valid {
			r.CompressedB = ptr(h.compressed.Int64)
		}
	}
	if pages > 0 {
		r.Pages = ptr(pages)
	}
	if r.DurationS != nil && *r.DurationS > 0 {
		// The time throughput divides by: the engine's, as its MB/sec
		// implies, when that is the more precise (ThroughputEngine).
		elapsed, src := *r.DurationS, ThroughputDuration
		if r.DurationSource == DurationEngine && pages > 0 && r.EngineMBps != nil && *r.EngineMBps > seconds {
			elapsed, src = float64(pages)*8192/mib / *r.EngineMBps, ThroughputEngine
		}
		switch {
		case r.BackupBytes != nil && *r.BackupBytes > 0:
			r.LogicalMiBps = ptr(float64(*r.BackupBytes) / mib / elapsed)
		case pages > 0:
			r.LogicalMiBps = ptr(float64(pages) * 8192 / mib / elapsed)
			if src == ThroughputEngine {
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
	if h != nil {
		r.SourceServer = h.srcServer
		r.SourceDatabase = h.srcDB
		if h.major.Valid && h.minor.Valid && h.build.Valid {
			r.SourceBuild = fmt.Sprintf("%d.%d.%d", h.major.Int64, h.minor.Int64, h.build.Int64)
		}
		switch {
		case h.family != "":
			r.Family = strings.ToLower(h.family)
		case h.srcServer != "" && h.srcDB != "":
			r.Family = strings.ToLower(h.srcServer + "/" + h.srcDB)
		}
		if h.backupSize.Valid {
			// A NULL compressed size is what an upgraded msdb leaves for an
			// uncompressed backup (reference §1.4).
			r.Compressed = ptr(h.compressed.Valid && h.compressed.Int64 > 0 && h.compressed.Int64 < h.backupSize.Int64)
		}
		if h.keyAlg != "" {
			r.Encrypted = ptr(!strings.EqualFold(h.keyAlg, "NO_Encryption"))
		} else if h.backupSize.Valid {
			r.Encrypted = ptr(false)
		}
		if h.checksums.Valid {
			r.Checksum = ptr(h.checksums.Bool)
		}
		if h.copyOnly.Valid {
			r.CopyOnly = ptr(h.copyOnly.Bool)
		}
		r.UserName = h.user
		r.DestinationFiles = h.destinations
	}
	// Devices: the error log names what this restore read; msdb's
	// physical_device_name may be the backup's original destination.
	var devType string
	var hDevType sql.NullInt64
	switch {
	case l != nil && len(l.devices) > 0:
		r.Devices, devType = l.devices, l.devType
	case h != nil:
		r.Devices = h.devices
		hDevType = h.deviceType
	}
	if h != nil && !hDevType.Valid {
		hDevType = h.deviceType
	}
	r.DeviceKind = DeviceKindOf(r.Devices, devType, hDevType)
	switch {
	case h != nil && h.mediaFamilies.Valid:
		r.Stripes = ptr(h.mediaFamilies.Int64)
	case l != nil && l.deviceCount.Valid:
		r.Stripes = ptr(l.deviceCount.Int64)
	case h != nil && h.deviceCount.Valid:
		r.Stripes = ptr(h.deviceCount.Int64)
	case len(r.Devices) > 0:
		r.Stripes = ptr(int64(len(r.Devices)))
	}
	if l != nil && l.buffer != nil {
		b := l.buffer
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
	ref := atLocal
	if started != nil {
		ref = *started
	}
	if st, ok := tl.state(ref); ok {
		r.InstanceBuild = st.version
		if st.ifi.Valid {
			r.IFI = ptr(st.ifi.Bool)
		}
		if st.cores.Valid {
			r.CPUCount = ptr(st.cores.Int64)
		}
		if st.mem.Valid {
			r.MemoryMB = ptr(st.mem.Int64)
		}
		r.TraceFlags = canonList(st.flags)
		r.Modules = canonList(st.mods)
	}
	r.Sources = strings.Join(dedupe(sources), "+")
	return d
}

// DeviceKindOf classifies a backup's devices: a local path, a UNC share, a URL
// (backup to Azure Storage or S3), a virtual device (third-party VDI tools) or
// tape. logType is the error log's TYPE=; msdbType is device_type.
func DeviceKindOf(devices []string, logType string, msdbType sql.NullInt64) string {
	switch strings.ToUpper(logType) {
	case "VIRTUAL_DEVICE":
		return DeviceVirtual
	case "URL":
		return DeviceURL
	case "TAPE":
		return DeviceTape
	}
	if msdbType.Valid {
		switch msdbType.Int64 {
		case 7:
			return DeviceVirtual
		case 9:
			return DeviceURL
		case 5:
			return DeviceTape
		}
	}
	for _, d := range devices {
		ld := strings.ToLower(strings.TrimSpace(d))
		switch {
		case strings.HasPrefix(ld, "http://"), strings.HasPrefix(ld, "https://"), strings.HasPrefix(ld, "s3://"):
			return DeviceURL
		case strings.HasPrefix(ld, `\\`), strings.HasPrefix(ld, "//"):
			return DeviceUNC
		}
	}
	if len(devices) == 0 {
		return ""
	}
	for _, d := range devices {
		if isGUIDLike(strings.TrimSpace(d)) {
			return DeviceVirtual // VDI devices are named by a GUID
		}
	}
	return DeviceLocal
}

func isGUIDLike(s string) bool {
	s = strings.Trim(s, "{}")
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
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
