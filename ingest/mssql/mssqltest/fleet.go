// Package mssqltest scripts SQL Server instances for tests and benchmarks of
// the live collector: an Instance holds what a real server would hold (msdb
// restore history, error-log files, Agent job history, host facts, restores
// running now) and answers the collector's own queries - recognised by the
// marker line each .sql file of ingest/mssql starts its queries with - with
// result sets in msdb's column types, served by ingest/mssql/tdstest.
//
// Like tdstest it proves the driver, parameters, scanning and the
// collector's logic; it cannot prove that the T-SQL runs on SQL Server. It
// does model what the collector depends on: watermark and time-window
// filters, TOP (@batch), archive numbering, and the objects and columns
// each SQL Server version has (columns/): a query naming one the version
// lacks fails as SQL Server fails it, and COL_LENGTH and OBJECT_ID probes
// take the branch that version would (see Schema.Check).
package mssqltest

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
	"github.com/restorewatch/restorewatch/store"
)

// LogRow is one row of xp_readerrorlog.
type LogRow struct {
	At     time.Time // the instance's wall clock (UTC-located)
	Source string    // ProcessInfo
	Text   string
}

// AgentStep is one msdb.dbo.sysjobhistory row.
type AgentStep struct {
	ID                          int64 // instance_id
	Job, Step                   string
	StepID, Status              int64
	RunDate, RunTime, RunDurHMS int64
	Message                     string
}

// Running is one sys.dm_exec_requests row of a restore.
type Running struct {
	SessionID int64
	Start     time.Time
	Command   string
	Percent   float64
	EstMs     int64
	WaitType  string
	Statement string
	ContextDB string
}

// Host is what SERVERPROPERTY and the DMVs say about the instance.
type Host struct {
	Version, Level, UpdateLevel, UpdateRef, Edition string
	Machine, InstanceName                           string
	CPUs, Sockets, MemoryMB                         int64
	VM                                              string // NONE, HYPERVISOR
	IFI                                             string // Y, N
	ServiceAccount                                  string
	TraceFlags                                      []int
	Modules                                         []string // full paths of non-Microsoft DLLs
	Config                                          map[string]int64
}

// Instance is one scripted SQL Server. Its methods are safe to call while
// the collector queries it.
type Instance struct {
	mu         sync.Mutex
	name       string
	host       Host
	offset     int       // minutes
	clock      time.Time // the server's local wall clock; zero = now in its offset
	history    []store.HistoryRow
	logs       [][]LogRow // 0 = current ERRORLOG
	agent      []AgentStep
	running    []Running
	fail       map[string]error
	registered []Registered
	delay      map[string]time.Duration
	calls      map[string]int
	nextHist   int64
	nextLSN    int64
	schema     *Schema // nil: the one of the version's release
}

// New returns an instance named name running version (four-part) at UTC
// offset offsetMin.
func New(name, version string, offsetMin int) *Instance {
	return &Instance{name: name, offset: offsetMin, logs: [][]LogRow{nil}, fail: map[string]error{},
		calls: map[string]int{}, delay: map[string]time.Duration{}, nextHist: 1, nextLSN: 30,
		host: Host{Version: version, Level: "RTM", Edition: "Enterprise Edition (64-bit)", Machine: strings.Split(name, `\`)[0],
			CPUs: 16, Sockets: 2, MemoryMB: 131072, VM: "HYPERVISOR", IFI: "Y", ServiceAccount: `CORP\svc-sql`,
			Config: map[string]int64{"backup compression default": 1, "backup checksum default": 0, "max server memory (MB)": 117964}}}
}

func (in *Instance) lock() func() { in.mu.Lock(); return in.mu.Unlock }

// Name returns the instance's name.
func (in *Instance) Name() string { return in.name }

// SetHost replaces the host facts; keep Version four-part.
func (in *Instance) SetHost(h Host) { defer in.lock()(); in.host = h }

// SetVersion changes the engine version, as an upgrade does.
func (in *Instance) SetVersion(v string) { defer in.lock()(); in.host.Version = v }

// SetClock fixes the server's local wall clock (UTC-located); zero follows
// time.Now in the instance's offset.
func (in *Instance) SetClock(t time.Time) { defer in.lock()(); in.clock = t }

// Now returns the server's local wall clock.
func (in *Instance) Now() time.Time { defer in.lock()(); return in.now() }

func (in *Instance) now() time.Time {
	if !in.clock.IsZero() {
		return in.clock
	}
	t := time.Now().UTC().Add(time.Duration(in.offset) * time.Minute)
	return t.Truncate(time.Millisecond)
}

// Fail makes the named query ("errorlog/read", "host/modules", ...) fail
// with err (a tdstest.Error for a SQL Server error); nil clears it.
func (in *Instance) Fail(query string, err error) {
	defer in.lock()()
	if err == nil {
		delete(in.fail, query)
		return
	}
	in.fail[query] = err
}

// Delay makes the named query take d longer ("" = every query): a slow
// server, or one that hangs in the middle of a pass.
func (in *Instance) Delay(query string, d time.Duration) { defer in.lock()(); in.delay[query] = d }

// Registered is a server registered on a Central Management Server.
type Registered struct{ Name, Server, Group string }

// SetRegistered makes the instance a CMS listing servers.
func (in *Instance) SetRegistered(r ...Registered) { defer in.lock()(); in.registered = r }

// Calls returns how often the named query was asked.
func (in *Instance) Calls(query string) int { defer in.lock()(); return in.calls[query] }

// AddHistory appends restorehistory rows; a zero RestoreHistoryID gets the
// next identity value.
func (in *Instance) AddHistory(rows ...store.HistoryRow) {
	defer in.lock()()
	for _, r := range rows {
		if r.RestoreHistoryID == 0 {
			r.RestoreHistoryID = in.nextHist
		}
		in.nextHist = max(in.nextHist, r.RestoreHistoryID+1)
		in.history = append(in.history, r)
	}
}

// RebuildMSDB empties restorehistory and sysjobhistory and restarts their
// identities at 1, as rebuilding msdb does.
func (in *Instance) RebuildMSDB() {
	defer in.lock()()
	in.history, in.agent, in.nextHist = nil, nil, 1
}

// PurgeHistoryBefore deletes the oldest restorehistory rows, as
// sp_delete_backuphistory does.
func (in *Instance) PurgeHistoryBefore(t time.Time) {
	defer in.lock()()
	kept := in.history[:0]
	for _, r := range in.history {
		if !r.RestoreDate.Before(t) {
			kept = append(kept, r)
		}
	}
	in.history = kept
}

// Log appends rows to the current error log.
func (in *Instance) Log(rows ...LogRow) { defer in.lock()(); in.logs[0] = append(in.logs[0], rows...) }

// CycleErrorLog makes the current log ERRORLOG.1 and starts a new one, as
// sp_cycle_errorlog and a restart do.
func (in *Instance) CycleErrorLog() { defer in.lock()(); in.logs = append([][]LogRow{nil}, in.logs...) }

// AddAgentStep appends a sysjobhistory row; a zero ID gets the next one.
func (in *Instance) AddAgentStep(s AgentStep) {
	defer in.lock()()
	if s.ID == 0 {
		s.ID = int64(len(in.agent)) + 1
		if n := len(in.agent); n > 0 {
			s.ID = in.agent[n-1].ID + 1
		}
	}
	in.agent = append(in.agent, s)
}

// SetRunning replaces the restores running now.
func (in *Instance) SetRunning(r ...Running) { defer in.lock()(); in.running = r }

// Restore describes one completed restore to script into msdb and the
// error log at once.
type Restore struct {
	Database string
	Kind     store.Kind // full, diff or log
	Start    time.Time  // statement start, the instance's wall clock
	Seconds  float64    // engine-measured duration
	Bytes    int64      // backup_size
	Source   string     // server that took the backup
	Devices  []string
}

// AddRestore adds a restore as SQL Server records it: a restorehistory row
// whose restore_date is the start, and at the end the completion and 3014
// lines in the error log, with matching LSNs. It returns the history row.
func (in *Instance) AddRestore(r Restore) store.HistoryRow {
	in.mu.Lock()
	seq := in.nextLSN
	in.nextLSN++
	in.mu.Unlock()
	first, last := fmt.Sprintf("%d:1000:1", seq), fmt.Sprintf("%d:1024:1", seq)
	firstN, _ := store.LSNFromLog(first)
	lastN, _ := store.LSNFromLog(last)
	rtype, btype, msg, stmt := "D", "D", "Database was restored: Database: %s, creation date(time): 2020/01/01(00:00:00), first LSN: %s, last LSN: %s, number of dump devices: 1, device information: (FILE=1, TYPE=DISK: {'%s'}). Informational message. No user action required.", "RESTORE DATABASE"
	switch r.Kind {
	case store.KindDiff:
		rtype, btype, msg = "I", "I", "Database changes were restored. Database: %s, creation date(time): 2020/01/01(00:00:00), first LSN: %s, last LSN: %s, number of dump devices: 1, device information: (FILE=1, TYPE=DISK: {'%s'}). This is an informational message. No user action is required."
	case store.KindLog:
		rtype, btype, stmt = "L", "L", "RESTORE LOG"
		msg = "Log was restored. Database: %s, creation date(time): 2020/01/01(00:00:00), first LSN: %s, last LSN: %s, number of dump devices: 1, device information: (FILE=1, TYPE=DISK: {'%s'}). This is an informational message. No user action is required."
	}
	devices := r.Devices
	if len(devices) == 0 {
		devices = []string{`\\backup01\sql\` + r.Database + ".bak"}
	}
	src := r.Source
	if src == "" {
		src = "SRC01"
	}
	size, pages := r.Bytes, r.Bytes/8192
	t, one, maj, mnr, bld, fam := true, int64(1), int64(13), int64(0), int64(4474), int64(1)
	start := r.Start.Add(-time.Hour)
	h := store.HistoryRow{RestoreDate: r.Start, Database: r.Database, UserName: `CORP\dba`, RestoreType: rtype,
		Recovery: &t, Replace: &t, DeviceCount: &one, BackupSetUUID: fmt.Sprintf("6F9619FF-8B86-D011-B42D-%012X", seq),
		FamilyGUID: "11111111-2222-3333-4444-555555555555", SourceServer: src, SourceMachine: src,
		SourceDatabase: r.Database, BackupType: btype, BackupStart: &start, BackupFinish: &start,
		FirstLSN: firstN, LastLSN: lastN, BackupSize: &size, CompressedSize: &size, SoftwareMajor: &maj,
		SoftwareMinor: &mnr, SoftwareBuild: &bld, IsCopyOnly: new(bool), HasChecksums: &t, KeyAlgorithm: "NO_Encryption",
		MediaFamilies: &fam, DeviceType: ptr(int64(2)), Devices: devices,
		DestinationFiles: []string{`D:\Data\` + r.Database + ".mdf", `L:\Log\` + r.Database + "_log.ldf"}}
	in.AddHistory(h)
	end := r.Start.Add(time.Duration(r.Seconds * float64(time.Second)))
	in.Log(
		LogRow{At: end, Source: "Backup", Text: fmt.Sprintf(msg, r.Database, first, last, devices[0])},
		LogRow{At: end.Add(20 * time.Millisecond), Source: "Backup", Text: fmt.Sprintf("%s successfully processed %d pages in %.3f seconds (%.3f MB/sec).",
			stmt, pages, r.Seconds, float64(pages)*8192/1048576/r.Seconds)},
	)
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.history[len(in.history)-1]
}

func ptr[T any](v T) *T { return &v }

// Serve starts a TDS server answering as in, accepting the SQL login
// user/password, and returns it with its address; close it when done.
func Serve(in *Instance, user, password string) (*tdstest.Server, string, error) {
	in.mu.Lock()
	v := in.host.Version
	in.mu.Unlock()
	srv := tdstest.New(tdstest.Config{User: user, Password: password, Handler: in, ServerVersion: v})
	addr, err := srv.Start()
	if err != nil {
		return nil, "", err
	}
	return srv, addr, nil
}

// Startup logs what SQL Server writes to a fresh error log when it starts:
// the banner of the current version (one row per banner line, as
// xp_readerrorlog returns it), the UTC adjustment, the server name and the
// host lines. It starts a new ERRORLOG, as a restart does, unless the
// current one is still empty.
func (in *Instance) Startup(at time.Time) {
	in.mu.Lock()
	if len(in.logs[0]) > 0 {
		in.logs = append([][]LogRow{nil}, in.logs...)
	}
	banner := strings.Split(strings.TrimRight(in.versionText(), "\n"), "\n")
	h, off := in.host, in.offset
	in.mu.Unlock()
	var rows []LogRow
	for _, l := range banner {
		rows = append(rows, LogRow{At: at, Source: "Server", Text: strings.TrimPrefix(l, "\t")})
	}
	sign := ""
	if off < 0 {
		sign, off = "-", -off
	}
	ifi := "enabled"
	if h.IFI == "N" {
		ifi = "disabled"
	}
	rows = append(rows, LogRow{At: at, Source: "Server", Text: ""},
		LogRow{At: at, Source: "Server", Text: fmt.Sprintf("UTC adjustment: %s%d:%02d", sign, off/60, off%60)},
		LogRow{At: at, Source: "Server", Text: fmt.Sprintf("SQL Server detected %d sockets with %d cores per socket and %d logical processors per socket, %d total logical processors; using %d logical processors based on SQL Server licensing. This is an informational message; no user action is required.",
			h.Sockets, h.CPUs/max(1, h.Sockets), h.CPUs/max(1, h.Sockets), h.CPUs, h.CPUs)},
		LogRow{At: at, Source: "Server", Text: fmt.Sprintf("Detected %d MB of RAM. This is an informational message; no user action is required.", h.MemoryMB)},
		LogRow{At: at.Add(100 * time.Millisecond), Source: "Server", Text: "Database Instant File Initialization: " + ifi + ". For security and performance considerations see the topic 'Database Instant File Initialization' in SQL Server Books Online. This is an informational message only. No user action is required."},
		LogRow{At: at.Add(200 * time.Millisecond), Source: "Server", Text: fmt.Sprintf("Server name is '%s'. This is an informational message only. No user action is required.", in.name)},
	)
	in.Log(rows...)
}
