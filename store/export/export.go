// Package export writes warehouse records as CSV and JSON for the command line
// and the dashboard's downloads, in one shape for both.
package export

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// RestoreRow is the SPEC §6.1 JSON shape of a restore.
type RestoreRow struct {
	ID              int64    `json:"id"`
	Instance        string   `json:"instance"`
	Database        string   `json:"database"`
	Kind            string   `json:"kind"`
	StartedAt       *string  `json:"started_at"`
	FinishedAt      *string  `json:"finished_at"`
	At              string   `json:"at"`
	DurationS       *float64 `json:"duration_s"`
	DurationSource  string   `json:"duration_source"`
	BackupBytes     *int64   `json:"backup_bytes"`
	CompressedBytes *int64   `json:"compressed_bytes"`
	Pages           *int64   `json:"pages"`
	LogicalMiBps    *float64 `json:"logical_mibps"`
	ReadMiBps       *float64 `json:"read_mibps"`
	SizeSource      string   `json:"size_source"`
	InstanceBuild   string   `json:"instance_build"`
	InstanceRelease string   `json:"instance_release"`
	SourceServer    string   `json:"source_server"`
	SourceDatabase  string   `json:"source_database"`
	SourceBuild     string   `json:"source_build"`
	SourceRelease   string   `json:"source_release"`
	Compressed      *bool    `json:"compressed"`
	Encrypted       *bool    `json:"encrypted"`
	Checksum        *bool    `json:"checksum"`
	Devices         []string `json:"devices"`
	// DestinationFiles are where the restore put the database's files.
	DestinationFiles []string `json:"destination_files"`
	DeviceKind       string   `json:"device_kind"`
	Stripes          *int64   `json:"stripes"`
	BufferCount      *int64   `json:"buffer_count"`
	MaxTransferKiB   *int64   `json:"max_transfer_kib"`
	IOAlignment      *int64   `json:"io_alignment"`
	OffsetKnown      bool     `json:"utc_offset_known"`
	Sources          string   `json:"sources"`
	// ThroughputSource says what the two rates were computed from:
	// "duration" (the size over duration_s) or "engine_mbps" (the 3014
	// line's MB/sec, the more precise for a short restore).
	ThroughputSource string `json:"throughput_source"`
	// Knee is where the restore's progress slowed sharply, when the
	// collector watched it and it did (absent otherwise).
	Knee *Knee `json:"knee,omitempty"`
}

// TimeFormat is how exports write an instant: RFC 3339 in UTC with the
// warehouse's milliseconds, always three digits, so restores completed
// within one second keep distinct times and their order (and the text sorts
// as the time does).
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// Time formats t as TimeFormat, in UTC.
func Time(t time.Time) string { return t.UTC().Format(TimeFormat) }

// Namer names builds ("2016 SP1 CU8"); nil leaves release names empty.
type Namer func(version string) string

// Row converts a restore to its exported shape.
func Row(r *store.Restore, name Namer) RestoreRow {
	ts := func(t *time.Time) *string {
		if t == nil {
			return nil
		}
		s := Time(*t)
		return &s
	}
	row := RestoreRow{
		ID: r.ID, Instance: r.Instance, Database: r.Database, Kind: string(r.Kind), StartedAt: ts(r.StartedAt),
		FinishedAt: ts(r.FinishedAt), At: Time(r.At), DurationS: r.DurationS,
		DurationSource: r.DurationSource, BackupBytes: r.BackupBytes, CompressedBytes: r.CompressedB, Pages: r.Pages,
		LogicalMiBps: round3(r.LogicalMiBps), ReadMiBps: round3(r.ReadMiBps), SizeSource: r.SizeSource,
		ThroughputSource: r.ThroughputSource, InstanceBuild: r.InstanceBuild, SourceServer: r.SourceServer, SourceDatabase: r.SourceDatabase,
		SourceBuild: r.SourceBuild, Compressed: r.Compressed, Encrypted: r.Encrypted, Checksum: r.Checksum,
		Devices: r.Devices, DeviceKind: r.DeviceKind, Stripes: r.Stripes, BufferCount: r.BufferCount,
		MaxTransferKiB: r.MaxTransferKiB, IOAlignment: r.IOAlignment, OffsetKnown: r.OffsetKnown, Sources: r.Sources,
	}
	if row.Devices == nil {
		row.Devices = []string{}
	}
	row.DestinationFiles = r.DestinationFiles
	if row.DestinationFiles == nil {
		row.DestinationFiles = []string{}
	}
	if name != nil {
		if r.InstanceBuild != "" {
			row.InstanceRelease = name(r.InstanceBuild)
		}
		if r.SourceBuild != "" {
			row.SourceRelease = name(r.SourceBuild)
		}
	}
	return row
}

func round3(v *float64) *float64 {
	if v == nil {
		return nil
	}
	x := float64(int64(*v*1000+0.5)) / 1000
	return &x
}

// CSVHeader is the column list of WriteCSV.
var CSVHeader = []string{"id", "instance", "database", "kind", "started_at", "finished_at", "duration_s",
	"duration_source", "backup_bytes", "compressed_bytes", "logical_mibps", "read_mibps", "instance_build",
	"instance_release", "source_server", "source_build", "source_release", "compressed", "encrypted", "checksum",
	"device_kind", "stripes", "buffer_count", "max_transfer_kib", "io_alignment", "devices", "destination_files", "sources",
	"at", "throughput_source"}

// CSVWriter writes restores as CSV, one Write per restore.
type CSVWriter struct{ w *csv.Writer }

// NewCSVWriter writes the header and returns the writer.
func NewCSVWriter(w io.Writer) (*CSVWriter, error) {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return nil, err
	}
	return &CSVWriter{w: cw}, nil
}

// Write writes one row.
func (c *CSVWriter) Write(r RestoreRow) error {
	return c.w.Write([]string{strconv.FormatInt(r.ID, 10), Cell(r.Instance), Cell(r.Database), r.Kind, sp(r.StartedAt),
		sp(r.FinishedAt), fp(r.DurationS), r.DurationSource, ip(r.BackupBytes), ip(r.CompressedBytes), fp(r.LogicalMiBps),
		fp(r.ReadMiBps), Cell(r.InstanceBuild), Cell(r.InstanceRelease), Cell(r.SourceServer), Cell(r.SourceBuild),
		Cell(r.SourceRelease), bp(r.Compressed), bp(r.Encrypted), bp(r.Checksum), r.DeviceKind, ip(r.Stripes),
		ip(r.BufferCount), ip(r.MaxTransferKiB), ip(r.IOAlignment), Cell(strings.Join(r.Devices, "|")),
		Cell(strings.Join(r.DestinationFiles, "|")), r.Sources, r.At, r.ThroughputSource})
}

// Flush flushes and reports any write error.
func (c *CSVWriter) Flush() error { c.w.Flush(); return c.w.Error() }

// Cell neutralises a spreadsheet formula: a value from a server that starts
// with = + - @ (or a tab or carriage return) is prefixed with a quote so a
// spreadsheet shows it as text instead of running it.
func Cell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

// WriteJSON writes v as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func sp(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func fp(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

func ip(v *int64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatInt(*v, 10)
}

func bp(v *bool) string {
	if v == nil {
		return ""
	}
	if *v {
		return "1"
	}
	return "0"
}
