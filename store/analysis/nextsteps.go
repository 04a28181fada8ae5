package analysis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/human"
)

// NextStep is what to gather when a regression has no recorded factor that
// differs: a fact the warehouse lacks for the restores around the change,
// why it could explain the slowdown, and the query or command that reads it.
type NextStep struct {
	Fact string `json:"fact"` // "share_latency", "filter_drivers", "ifi", …
	Name string `json:"name"` // in words
	// Missing says what the warehouse lacks: never recorded, or known for
	// only some of the restores before and after the change.
	Missing string `json:"missing"`
	Why     string `json:"why"`
	// Where is where to run Command ("on DWH-SQL02 while a restore runs").
	Where   string `json:"where"`
	Kind    string `json:"kind"` // "T-SQL", "PowerShell", "command"
	Command string `json:"command"`
}

// recordedFact is a factor the warehouse records per restore and the step
// that gathers it when it is unknown.
type recordedFact struct {
	factor, fact, name, why, where, kind, command string
}

// perRestore are the recorded factors whose gaps a step can fill, in the
// order the steps are listed.
var perRestore = []recordedFact{
	{"loaded_modules", "loaded_modules", "Non-Microsoft modules loaded in SQL Server",
		"antivirus, backup and monitoring products load DLLs into sqlservr.exe and filter its file I/O; one installed or updated at the change slows every restore without any recorded setting changing",
		"on %s", "T-SQL", "SELECT name, company, description, file_version FROM sys.dm_os_loaded_modules WHERE company IS NULL OR company NOT LIKE N'Microsoft%';"},
	{"ifi", "ifi", "Instant file initialisation",
		"without it every data file is written with zeros before the copy starts; a new service account or a lost 'Perform volume maintenance tasks' right turns it off",
		"on %s", "T-SQL", "SELECT servicename, service_account, instant_file_initialization_enabled FROM sys.dm_server_services;"},
	{"io_alignment", "io_alignment", "Buffer settings and I/O alignment of each restore",
		"BUFFERCOUNT, MAXTRANSFERSIZE and the destination's sector size set how fast a restore copies; trace flag 3213 writes them to the error log with every restore, where restorewatch reads them",
		"on %s (the error log then records every restore's buffer report)", "T-SQL", "DBCC TRACEON (3213, 3605, -1);"},
	{"instance_build", "instance_build", "The restoring instance's build",
		"a cumulative update can bring or fix a restore slowdown (the known-issue catalogue matches on it)",
		"on %s", "T-SQL", "SELECT SERVERPROPERTY('ProductVersion') AS build, SERVERPROPERTY('ProductUpdateLevel') AS update_level;"},
	{"cpu_count", "host", "CPUs and memory of the host",
		"a host moved to a smaller VM, or sharing its cores, restores more slowly",
		"on %s", "T-SQL", "SELECT cpu_count, physical_memory_kb / 1024 AS memory_mb, virtual_machine_type_desc FROM sys.dm_os_sys_info;"},
}

// NextStepFacts is what NextSteps judges: the restores of a regression's
// series before and after its change, with their factors (RestoreFactors'
// maps; "" is unknown).
type NextStepFacts struct {
	Instance, Database string
	Before, After      []map[string]string
}

// NextSteps lists what would explain a regression whose recorded factors do
// not differ: the facts restorewatch never records (share latency, filter
// drivers, VLFs, file growth) and those it records but lacks for some of the
// restores around the change, each with how to gather it. The steps the
// restores' own facts point to come first (a share's latency when the
// backups are read over the network).
func NextSteps(f NextStepFacts) []NextStep {
	on := func(where string) string {
		if strings.Contains(where, "%s") {
			return fmt.Sprintf(where, f.Instance)
		}
		return where
	}
	db := strings.ReplaceAll(f.Database, "'", "''")
	var steps []NextStep
	remote, device := false, ""
	for _, side := range [][]map[string]string{f.Before, f.After} {
		for _, m := range side {
			if k := m["device_kind"]; k == store.DeviceUNC || k == store.DeviceURL {
				remote, device = true, k
			}
		}
	}
	share := NextStep{Fact: "share_latency", Name: "Read latency and throughput of the backup share",
		Missing: "never recorded: restorewatch sees the restore, not the network path to its backup",
		Why: "a slower share, filer or path lengthens every restore while nothing on the server changes; " +
			"copying one backup to a local disk and restoring it from there shows how much the share costs",
		Where: on("on %s while a restore runs"), Kind: "PowerShell",
		Command: `Get-Counter '\SMB Client Shares(*)\Avg. sec/Read', '\SMB Client Shares(*)\Read Bytes/sec' -SampleInterval 5 -MaxSamples 60`}
	if remote {
		share.Why = "the backups are read over the network (" + human.FactorValue("device_kind", device) + "): " + share.Why
	}
	filter := NextStep{Fact: "filter_drivers", Name: "File-system filter drivers",
		Missing: "never recorded: kernel minifilters are not SQL Server modules",
		Why: "antivirus, backup agents, encryption products and FILESTREAM's RsFx driver attach to the volumes " +
			"and see every write of a restore; one installed, updated or reconfigured at the change slows it",
		Where: on("on %s, as administrator"), Kind: "command", Command: "fltmc instances"}
	if remote {
		steps = append(steps, share, filter)
	} else {
		steps = append(steps, filter)
	}
	for _, rf := range perRestore {
		if missing := gap(f.Before, f.After, rf.factor); missing != "" {
			steps = append(steps, NextStep{Fact: rf.fact, Name: rf.name, Missing: missing, Why: rf.why,
				Where: on(rf.where), Kind: rf.kind, Command: rf.command})
		}
	}
	steps = append(steps,
		NextStep{Fact: "vlfs", Name: "Virtual log files of the database's log",
			Missing: "never recorded",
			Why:     "a log of thousands of VLFs makes the end of every restore (analysis, redo, undo) slow; it grows with each small autogrowth of the log on the source",
			Where:   "on the source server, in the source database", Kind: "T-SQL",
			Command: "SELECT COUNT(*) AS vlfs FROM sys.dm_db_log_info(DB_ID(N'" + db + "'));"},
		NextStep{Fact: "file_growth", Name: "Size and growth of the database's files",
			Missing: "never recorded",
			Why:     "a restore creates every file at its full size and always zeroes the log, with or without instant file initialisation: a log that grew at the change adds its whole size to every restore",
			Where:   "on the source server", Kind: "T-SQL",
			Command: "SELECT name, type_desc, size / 128 AS size_mb, growth, is_percent_growth FROM sys.master_files WHERE database_id = DB_ID(N'" + db + "');"})
	if !remote {
		steps = append(steps, share)
	}
	return steps
}

// gap says how much of a factor is unknown around a change, "" when it is
// known for every restore on both sides.
func gap(before, after []map[string]string, factor string) string {
	kb, ka := known(before, factor), known(after, factor)
	if kb == len(before) && ka == len(after) {
		return ""
	}
	if kb == 0 && ka == 0 {
		return "not recorded for any of these restores"
	}
	return fmt.Sprintf("known for %d of %d restores before the change and %d of %d since", kb, len(before), ka, len(after))
}

func known(ms []map[string]string, factor string) int {
	n := 0
	for _, m := range ms {
		if m[factor] != "" {
			n++
		}
	}
	return n
}

// NextStepStore is what RegressionNextSteps reads; the SQLite warehouse satisfies it.
type NextStepStore interface {
	ChartPoints(ctx context.Context, f store.RestoreFilter) ([]store.ChartPoint, error)
	RestoreFactors(ctx context.Context, ids []int64) (map[int64]map[string]string, error)
}

// nextStepRestores caps the restores read on each side of the change.
const nextStepRestores = 200

// capAt is n bounded by nextStepRestores, or nextStepRestores when n is
// unknown (0).
func capAt(n int) int {
	if n <= 0 || n > nextStepRestores {
		return nextStepRestores
	}
	return n
}

// RegressionNextSteps returns the next steps of a regression: what to do
// about the factors that changed with it (FactorNextSteps), else what to
// gather when none did (NextSteps). Every regression has at least one
// (issue 38); the page, the report and `regressions --format json` all
// call it.
func RegressionNextSteps(ctx context.Context, db NextStepStore, r *store.Regression) ([]NextStep, error) {
	if steps := FactorNextSteps(r); len(steps) > 0 {
		return steps, nil
	}
	pts, err := db.ChartPoints(ctx, store.RestoreFilter{Instance: r.Instance, Database: r.Database, Kind: r.Kind,
		From: r.ChangedAt.Add(-365 * 24 * time.Hour), Limit: 4 * nextStepRestores})
	if err != nil {
		return nil, fmt.Errorf("analysis: next steps of regression %d: %w", r.ID, err)
	}
	// The period the regression's figures cover: its BaselineN restores
	// before the change and CurrentN since (outliers included: their
	// facts are as missing as anyone's).
	nb, na := capAt(r.BaselineN), capAt(r.CurrentN)
	var before, after []int64
	for _, p := range pts { // newest first
		switch {
		case !p.At.Before(r.ChangedAt) && len(after) < na:
			after = append(after, p.ID)
		case p.At.Before(r.ChangedAt) && len(before) < nb:
			before = append(before, p.ID)
		}
	}
	fs, err := db.RestoreFactors(ctx, append(append([]int64{}, before...), after...))
	if err != nil {
		return nil, fmt.Errorf("analysis: next steps of regression %d: %w", r.ID, err)
	}
	f := NextStepFacts{Instance: r.Instance, Database: r.Database}
	for _, id := range before {
		f.Before = append(f.Before, fs[id])
	}
	for _, id := range after {
		f.After = append(f.After, fs[id])
	}
	return NextSteps(f), nil
}

// FactorNextSteps are the next steps of a regression whose restores differ
// in a recorded factor, one for each factor that separates them as
// cleanly as the best (BUFFERCOUNT and MAXTRANSFERSIZE together are one
// step): measure the share the backups moved to, set the buffers back,
// compare the builds or roll back, look at the new source's backups. A
// factor with no step of its own says to set it back. Nil when no factor
// changed.
func FactorNextSteps(r *store.Regression) []NextStep {
	if len(r.ChangedFactors) == 0 {
		return nil
	}
	on := "on " + r.Instance
	var steps []NextStep
	seen := map[string]bool{}
	best := r.ChangedFactors[0].Score
	for _, f := range r.ChangedFactors {
		if f.Score < best-0.05 {
			break
		}
		var st NextStep
		switch f.Factor {
		case "device_kind":
			st = NextStep{Fact: "share_latency", Name: "Measure the backup share's read latency",
				Why: fmt.Sprintf("the backups moved from %s to %s at the change: a share's latency or bandwidth lengthens every restore; copying one backup to a local disk and restoring it from there shows what the share costs",
					deviceWords(f.Before), deviceWords(f.After)),
				Where: on + " while a restore runs", Kind: "PowerShell",
				Command: "Get-Counter '\\SMB Client Shares(*)\\Avg. sec/Read', '\\SMB Client Shares(*)\\Read Bytes/sec' -SampleInterval 5 -MaxSamples 60"}
		case "buffer_count", "max_transfer_size":
			if seen["buffers"] {
				continue
			}
			seen["buffers"] = true
			bc, mt := factorOf(r, "buffer_count"), factorOf(r, "max_transfer_size")
			st = NextStep{Fact: "buffers", Name: "Set BUFFERCOUNT and MAXTRANSFERSIZE back",
				Why: fmt.Sprintf("the restores before the change used %s and ran at %.0f MiB/s; those since use %s: the restore plan's script sets the earlier values again",
					bufferWords(bc.Before, mt.Before), r.BaselineMiBps, bufferWords(bc.After, mt.After)),
				Where: "in the restore's script (the plan page's script sets them) " + on, Kind: "T-SQL",
				Command: fmt.Sprintf("RESTORE DATABASE %s FROM DISK = N'…' WITH %s, STATS = 5;", bracket(r.Database), bufferOptions(bc.Before, mt.Before))}
		case "instance_build":
			st = NextStep{Fact: "instance_build", Name: "Compare the builds: roll back, or move past " + f.After,
				Why: fmt.Sprintf("the restores slowed when %s moved from build %s to %s; restores on %s ran at %.0f MiB/s, on %s at %.0f MiB/s: test a restore on %s or on a later build before the next upgrade reaches production",
					r.Instance, f.Before, f.After, f.Before, r.BaselineMiBps, f.After, r.CurrentMiBps, f.Before),
				Where: on, Kind: "T-SQL",
				Command: "SELECT SERVERPROPERTY('ProductVersion') AS build, SERVERPROPERTY('ProductUpdateLevel') AS cu, SERVERPROPERTY('ProductUpdateReference') AS kb;"}
		case "source_build", "source_server":
			st = NextStep{Fact: f.Factor, Name: "Read the new source's backup headers",
				Why: fmt.Sprintf("the backups restored since the change come from %s (before: %s): compression, encryption, the page verify and the source's build change what a restore does",
					f.After, f.Before),
				Where: on, Kind: "T-SQL",
				Command: "RESTORE HEADERONLY FROM DISK = N'…';  -- Compressed, KeyAlgorithm, SoftwareVersionMajor/Minor/Build, BackupSize"}
		default:
			st = NextStep{Fact: f.Factor, Name: "Set the " + strings.ToLower(human.FactorLabel(f.Factor)) + " back",
				Why:   fmt.Sprintf("it was %s before the change and %s since; a restore with %s again shows whether it is the cause", orUnknown(f.Before), orUnknown(f.After), orUnknown(f.Before)),
				Where: on}
		}
		steps = append(steps, st)
	}
	return steps
}

func factorOf(r *store.Regression, factor string) store.FactorChange {
	for _, f := range r.ChangedFactors {
		if f.Factor == factor {
			return f
		}
	}
	return store.FactorChange{Factor: factor}
}

func bufferWords(bc, mt string) string {
	var parts []string
	if bc != "" {
		parts = append(parts, "BUFFERCOUNT "+bc)
	}
	if mt != "" {
		parts = append(parts, "MAXTRANSFERSIZE "+mt+" KiB")
	}
	if len(parts) == 0 {
		return "the default buffers"
	}
	return strings.Join(parts, " and ")
}

func bufferOptions(bc, mt string) string {
	var parts []string
	if bc != "" {
		parts = append(parts, "BUFFERCOUNT = "+bc)
	}
	if n, err := strconv.Atoi(mt); err == nil && n > 0 {
		parts = append(parts, "MAXTRANSFERSIZE = "+strconv.Itoa(n*1024))
	}
	return strings.Join(parts, ", ")
}

func deviceWords(kind string) string { return "a " + human.FactorValue("device_kind", kind) }

func bracket(name string) string { return "[" + strings.ReplaceAll(name, "]", "]]") + "]" }

func orUnknown(v string) string {
	if v == "" {
		return "unknown"
	}
	return v
}
