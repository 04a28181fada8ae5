package demo

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// HistoryHeader is the header of the history CSV: SPEC §3.3's columns in
// SPEC's order, then the destination_files extension, as the project's
// export query writes them.
var HistoryHeader = []string{"instance", "restore_history_id", "restore_date", "destination_database_name",
	"user_name", "restore_type", "replace", "recovery", "stop_at", "device_count", "backup_set_uuid", "family_guid",
	"source_server_name", "source_machine_name", "source_database_name", "backup_type", "backup_start_date",
	"backup_finish_date", "first_lsn", "last_lsn", "backup_size", "compressed_backup_size", "software_major_version",
	"software_minor_version", "software_build_version", "is_copy_only", "has_backup_checksums", "key_algorithm",
	"media_family_count", "device_type", "physical_device_names", "destination_files"}

// historyWriter writes the fleet's one history CSV, as SSMS saves it: CRLF,
// quotes only where needed, NULL as an empty field.
type historyWriter struct {
	path string
	f    *os.File
	b    *bufio.Writer
	c    *counter
	w    *csv.Writer
	row  []string
}

func newHistoryWriter(path string) (*historyWriter, error) {
	f, b, c, err := createFile(path)
	if err != nil {
		return nil, err
	}
	h := &historyWriter{path: path, f: f, b: b, c: c, w: csv.NewWriter(b), row: make([]string, len(HistoryHeader))}
	h.w.UseCRLF = true
	if err := h.w.Write(HistoryHeader); err != nil {
		f.Close()
		return nil, fmt.Errorf("demo: %s: %w", path, err)
	}
	return h, nil
}

// write adds the restorehistory row of r. Dates are the instance's local
// time at datetime precision; restore_date is the start of the restore, or
// its end on the instance whose msdb says so (the semantics SPEC §4 measures).
func (h *historyWriter) write(r *restore) error {
	s, in := r.s, r.s.in
	when := r.start
	if in.endDates {
		when = r.end()
	}
	rtype, btype := "D", "D"
	switch r.kind {
	case store.KindDiff:
		rtype, btype = "I", "I"
	case store.KindLog:
		rtype, btype = "L", "L"
	}
	ver := strings.Split(r.srcBuild, ".")
	row := h.row
	row[0] = in.name
	row[1] = itoa(r.histID)
	row[2] = csvDate(in.local(when))
	row[3] = s.db
	row[4] = s.user
	row[5] = rtype
	row[6] = bit(r.replace)
	row[7] = bit(r.recovery)
	row[8] = "" // stop_at: NULL
	row[9] = itoa(int64(len(r.devices)))
	row[10] = r.uuid
	row[11] = s.family
	row[12] = s.src
	row[13] = s.src // a default instance: machine name = server name
	row[14] = s.srcDB
	row[15] = btype
	row[16] = csvDate(in.local(r.bStart))
	row[17] = csvDate(in.local(r.bFinish))
	row[18] = r.first.numeric()
	row[19] = r.last.numeric()
	row[20] = itoa(r.backupSize)
	row[21] = itoa(r.compSize)
	row[22], row[23], row[24] = ver[0], ver[1], ver[2]
	row[25] = bit(s.copyOnly)
	row[26] = bit(s.checksum)
	row[27] = "" // key_algorithm: NULL, not encrypted
	row[28] = itoa(int64(s.stripes))
	row[29] = "2" // disk
	row[30] = strings.Join(r.devices, "|")
	// restorefile: the data and log files, where this fleet keeps them.
	row[31] = `D:\SQLData\` + s.db + `.mdf|L:\SQLLogs\` + s.db + `_log.ldf`
	return h.w.Write(row)
}

func bit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func (h *historyWriter) close() (int64, error) {
	if h.f == nil {
		return 0, nil
	}
	h.w.Flush()
	err := h.w.Error()
	if ferr := h.b.Flush(); err == nil {
		err = ferr
	}
	if cerr := h.f.Close(); err == nil {
		err = cerr
	}
	h.f = nil
	if err != nil {
		return h.c.n, fmt.Errorf("demo: %s: %w", h.path, err)
	}
	return h.c.n, nil
}

// TruthHeader is the header of truth.csv, the answer key tests read.
var TruthHeader = []string{"instance", "restore_history_id", "database", "kind", "start_utc", "end_utc",
	"duration_ms", "in_errorlog", "first_lsn", "last_lsn", "backup_size", "story", "devices"}

// truthWriter writes truth.csv: one row per restore, as generated.
type truthWriter struct{ historyWriter }

func newTruthWriter(path string) (*truthWriter, error) {
	f, b, c, err := createFile(path)
	if err != nil {
		return nil, err
	}
	t := &truthWriter{historyWriter{path: path, f: f, b: b, c: c, w: csv.NewWriter(b), row: make([]string, len(TruthHeader))}}
	if err := t.w.Write(TruthHeader); err != nil {
		f.Close()
		return nil, fmt.Errorf("demo: %s: %w", path, err)
	}
	return t, nil
}

func (t *truthWriter) write(r *restore, story string) error {
	row := t.row
	row[0], row[1], row[2], row[3] = r.s.in.name, itoa(r.histID), r.s.db, string(r.kind)
	row[4] = r.start.Format(time.RFC3339Nano)
	row[5] = r.end().Format(time.RFC3339Nano)
	row[6] = itoa(r.durMS)
	row[7] = bit(r.inLog)
	row[8], row[9] = r.first.numeric(), r.last.numeric()
	row[10] = itoa(r.backupSize)
	row[11] = story
	row[12] = strings.Join(r.devices, "|")
	return t.w.Write(row)
}
