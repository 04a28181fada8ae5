package analysis

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// KneeFinding is a restore whose progress slowed sharply part-way (SPEC §5
// "Knees"): where it slowed, how fast it copied before and after, and the
// known issues and checks that fit. FindKnee makes it; every page, the
// API and the CLI show this value and nothing recomputed.
type KneeFinding struct {
	Instance  string `json:"instance"`
	Database  string `json:"database"`
	Command   string `json:"command"`
	Statement string `json:"statement"`
	// Started is when the statement started (UTC); StartedLocal the
	// instance's wall clock, the key of its curve.
	Started      time.Time `json:"started"`
	StartedLocal time.Time `json:"-"`
	LastSeen     time.Time `json:"last_seen"`
	Running      bool      `json:"running"`
	// RestoreID is the warehouse's restore this run became, 0 while none
	// matches (still running, or its history not collected yet).
	RestoreID int64 `json:"restore_id,omitempty"`
	// Percent is the progress at the knee; At when it was reached (UTC).
	Percent float64   `json:"percent"`
	At      time.Time `json:"at"`
	// Index is the knee's point on the curve.
	Index int `json:"-"`
	// BeforePctMin and AfterPctMin are the copy rates (percent a minute)
	// before and after the knee (KneeRates).
	BeforePctMin float64 `json:"before_percent_per_min"`
	AfterPctMin  float64 `json:"after_percent_per_min"`
	// Bytes is the backup's logical size, 0 when unknown; SizeSource says
	// where it came from. The MiB/s figures are 0 without it.
	Bytes      int64   `json:"bytes,omitempty"`
	SizeSource string  `json:"size_source,omitempty"`
	BeforeMiBs float64 `json:"before_mibps,omitempty"`
	AfterMiBs  float64 `json:"after_mibps,omitempty"`
	// Slowdown is how many times slower it copied after the knee.
	Slowdown float64     `json:"slowdown"`
	Issues   []KneeIssue `json:"known_issues"`
	Checks   []KneeCheck `json:"checks"`
}

// KneeIssue is a catalogued issue whose build range and conditions this
// restore meets, with the facts that matched it.
type KneeIssue struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Why   string `json:"why"`
	Fixed string `json:"fixed_in,omitempty"` // the first fixed build of the instance's major, "" when none is known
}

// KneeCheck is one thing to look at on the server: Fits says the
// restore's own facts point to it, Why says which, Command how to look.
type KneeCheck struct {
	Name    string `json:"name"`
	Fits    bool   `json:"fits"`
	Why     string `json:"why"`
	Command string `json:"command"`
}

// KneeFacts is what the warehouse knows about the restore behind a curve.
type KneeFacts struct {
	// Restore is the warehouse's restore the curve became, nil when none.
	Restore *store.Restore
	// Backup is the backup history of the statement's files, nil when
	// unknown; used when Restore is nil or lacks what it knows.
	Backup *store.DeviceBackup
	// Build is the restoring instance's build at the time ("" unknown).
	Build string
	// Alignment is the destination's file-system I/O alignment in bytes
	// (0 unknown) and AlignmentSource where it was read.
	Alignment       int64
	AlignmentSource string
}

// Size is the backup's logical size and where it was read: the
// restore's, else the backup history of the statement's files; 0 unknown.
func (f KneeFacts) Size() (int64, string) {
	if r := f.Restore; r != nil && r.BackupBytes != nil && *r.BackupBytes > 0 {
		return *r.BackupBytes, "the restore's backup size (" + r.SizeSource + ")"
	}
	if b := f.Backup; b != nil && b.Size > 0 {
		return b.Size, "the backup history of its files"
	}
	return 0, ""
}

// filestreamKnee is the progress after which a knee points to FILESTREAM
// and FileTable containers, which a full restore writes last (seed 002:
// fast to 92 %, then the antimalware service scanned each document).
const filestreamKnee = 85.0

// FindKnee states the knee of a curve as a finding, or false when its
// progress did not slow sharply (Knee).
func FindKnee(c store.InflightCurve, f KneeFacts, cat []KnownIssue) (KneeFinding, bool) {
	k, ok := Knee(c.Points)
	if !ok {
		return KneeFinding{}, false
	}
	before, after := KneeRates(c.Points, k)
	offset := time.Duration(c.UTCOffset) * time.Minute
	kf := KneeFinding{Instance: c.Instance, Database: c.Database, Command: c.Command, Statement: c.Statement,
		Started: c.StartUTC, StartedLocal: c.Start, LastSeen: c.LastSeen, Running: !c.Ended,
		Percent: c.Points[k].Percent, At: c.Points[k].At.Add(-offset), Index: k,
		BeforePctMin: before, AfterPctMin: after}
	if after > 0 {
		kf.Slowdown = before / after
	}
	r := f.Restore
	devices := StatementDevices(c.Statement)
	if r != nil {
		kf.RestoreID = r.ID
		devices = r.Devices
	}
	kf.Bytes, kf.SizeSource = f.Size()
	if kf.Bytes > 0 {
		perSec := float64(kf.Bytes) / 100 / 60 / (1 << 20) // MiB/s for 1 %/min
		kf.BeforeMiBs, kf.AfterMiBs = before*perSec, after*perSec
	}
	conds, why := kneeConditions(f, devices)
	for _, ki := range MatchKnownIssues(cat, f.Build, conds) {
		kf.Issues = append(kf.Issues, kneeIssue(ki, f.Build, why))
	}
	kf.Checks = kneeChecks(kf, f, conds, why, devices)
	return kf, true
}

// kneeConditions names the known-issue conditions that hold for the
// restore, each with where the warehouse read it.
func kneeConditions(f KneeFacts, devices []string) (map[string]bool, map[string]string) {
	conds, why := map[string]bool{}, map[string]string{}
	set := func(name, text string) { conds[name], why[name] = true, text }
	r, b := f.Restore, f.Backup
	switch {
	case r != nil && r.Compressed != nil:
		if *r.Compressed {
			set("compressed", "the backup is compressed (the restore's history)")
		}
	case b != nil && b.CompressedSize > 0 && b.CompressedSize < b.Size:
		set("compressed", "the backup is compressed (its backup history)")
	}
	if r != nil && r.Encrypted != nil && *r.Encrypted {
		set("encrypted", "the backup is encrypted")
	}
	if f.Alignment == 4096 {
		set("io_alignment_4096", "the destination has 4096-byte sectors ("+f.AlignmentSource+")")
	}
	stripes := len(devices)
	if r != nil && r.Stripes != nil {
		stripes = int(*r.Stripes)
	}
	if stripes > 1 {
		set("striped", fmt.Sprintf("the backup is striped over %d files", stripes))
	}
	if r != nil && r.DeviceKind == store.DeviceVirtual {
		set("vdi", "a virtual device (VDI) supplied the backup")
	}
	return conds, why
}

func kneeIssue(ki KnownIssue, build string, why map[string]string) KneeIssue {
	out := KneeIssue{ID: ki.ID, Title: ki.Title}
	var parts []string
	if b, err := parseBuild(build); err == nil && len(ki.Affected) > 0 {
		for _, rg := range ki.Affected {
			if rg.Major == b[0] && ki.affects(b) && out.Fixed == "" {
				if from, err := parseBuild(rg.From); err == nil && compareBuilds(b, from) >= 0 {
					out.Fixed = rg.Fixed
				}
			}
		}
		p := "the instance's build " + build + " is in its affected range"
		if out.Fixed != "" {
			p += " (fixed in " + out.Fixed + ")"
		}
		parts = append(parts, p)
	}
	for _, c := range ki.Conditions {
		if w := why[c]; w != "" {
			parts = append(parts, w)
		}
	}
	out.Why = strings.Join(parts, "; ")
	return out
}

// kneeChecks are the checks SPEC §5 names for a knee, those the restore's
// facts point to first.
func kneeChecks(kf KneeFinding, f KneeFacts, conds map[string]bool, why map[string]string, devices []string) []KneeCheck {
	drive := "D:"
	if f.Restore != nil {
		for _, d := range f.Restore.DestinationFiles {
			if len(d) > 1 && d[1] == ':' {
				drive = strings.ToUpper(d[:2])
				break
			}
		}
	}
	sector := KneeCheck{Name: "4K-sector destination and a compressed backup (KB4088193)",
		Command: "fsutil fsinfo ntfsinfo " + drive + "    (Bytes Per Physical Sector: 4096 is a 4K-sector disk)"}
	switch {
	case conds["compressed"] && conds["io_alignment_4096"]:
		sector.Fits, sector.Why = true, why["compressed"]+"; "+why["io_alignment_4096"]+": the combination KB4088193 slows on affected builds"
	case conds["io_alignment_4096"]:
		sector.Why = why["io_alignment_4096"] + "; the backup's compression is not known to be on"
	default:
		sector.Why = "the destination's sector size is not recorded (trace flags 3213 and 3605 log it with every restore)"
	}
	fs := KneeCheck{Name: "FILESTREAM / FileTable containers scanned by the antivirus",
		Command: "SELECT DB_NAME(database_id) AS database_name, name, physical_name FROM sys.master_files WHERE type_desc = N'FILESTREAM';\n" +
			"fltmc instances    (filter drivers attached to the volumes: antivirus, RsFx)\n" +
			"Get-MpPreference | Select-Object -ExpandProperty ExclusionPath    (are the FILESTREAM directories excluded?)"}
	filestream := f.Backup != nil && f.Backup.Filestream
	switch {
	case filestream:
		fs.Fits, fs.Why = true, "the backup holds a FILESTREAM or FileTable container, written file by file at the end of the copy"
	case kf.Percent >= filestreamKnee:
		fs.Fits, fs.Why = true, fmt.Sprintf("it slowed after %.0f %%, near the end of the copy, where a full restore writes FILESTREAM and FileTable files one by one (an antivirus scanning each slowed one to a crawl after 92 %%)", kf.Percent)
	default:
		fs.Why = "the slowdown came before the end of the copy, where FILESTREAM files are written"
	}
	share := KneeCheck{Name: "Read latency of the backup share",
		Command: `Get-Counter '\SMB Client Shares(*)\Avg. sec/Read', '\SMB Client Shares(*)\Read Bytes/sec' -SampleInterval 5 -MaxSamples 24` +
			"    (on the restoring server while a restore runs)"}
	remote := slices.ContainsFunc(devices, func(d string) bool { return strings.HasPrefix(d, `\\`) || strings.Contains(d, "://") })
	switch {
	case remote:
		share.Fits, share.Why = true, "the backup is read over the network ("+devices[0]+")"
	case len(devices) == 0:
		share.Why = "where the backup was read from is not recorded"
	default:
		share.Why = "the backup is read from a local path (" + devices[0] + ")"
	}
	checks := []KneeCheck{sector, fs, share}
	slices.SortStableFunc(checks, func(a, b KneeCheck) int {
		switch {
		case a.Fits == b.Fits:
			return 0
		case a.Fits:
			return -1
		}
		return 1
	})
	return checks
}

// deviceRe finds the files a RESTORE statement reads: DISK = N'…', URL =
// '…', TAPE = '…' (quotes doubled inside).
var deviceRe = regexp.MustCompile(`(?i)\b(?:DISK|URL|TAPE)\s*=\s*N?'((?:[^']|'')*)'`)

// StatementDevices returns the backup files a RESTORE statement names, in
// order.
func StatementDevices(stmt string) []string {
	var out []string
	for _, m := range deviceRe.FindAllStringSubmatch(stmt, -1) {
		out = append(out, strings.ReplaceAll(m[1], "''", "'"))
	}
	return out
}
