package ingest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/restorewatch/restorewatch/ingest/locale"
	"github.com/restorewatch/restorewatch/ingest/textenc"
)

// sniffBytes is how much of a file Detect reads: an error log's first
// entries, a CSV's header, the first statements of captured output.
const sniffBytes = 64 << 10

var (
	// An error-log entry: "2025-03-01 02:00:01.23 spid51 …" (the file, the
	// Linux errorlog, xp_readerrorlog and SSMS exports: 2 to 7 fraction
	// digits, spaces or a TAB before the source).
	stampRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,7})?[ \t]+\S`)
	// What only RESTORE/BACKUP client output prints (SSMS, sqlcmd, Agent),
	// at the start of a line: a document that quotes such lines (a README,
	// a table of expectations) is not captured output.
	messageRE = regexp.MustCompile(`(?i)^(--\s*)?(processed \d+ pages for database|restore (database|log)\b|\d+ percent processed|msg \d+, level \d+|executed as user: .*\(message 30(14|13)\))`)
	// A history export's header names columns of the published query or of
	// dbatools' Get-DbaDbRestoreHistory.
	historyCols = []string{"restore_date", "destination_database_name", "restore_history_id", "restore_type",
		"sqlinstance", "restoretype"}
	// A backup history export's header: backup_history_export.sql's, or
	// dbatools' Get-DbaDbBackupHistory (-Raw, or the default one the
	// importer refuses with advice); never in a restore history's.
	backupCols = []string{"differential_base_lsn", "mediasetid", "filelist"}
)

// Detect tells a file's kind from its first bytes (decoded from UTF-16 or
// UTF-8 as the parsers do) and says why, in words a summary can show. A file
// of none of the kinds is an error that names what its first line looks like.
func Detect(r io.Reader) (kind FileKind, why string, err error) {
	head, err := io.ReadAll(io.LimitReader(r, sniffBytes))
	if err != nil {
		return "", "", err
	}
	dec, err := textenc.UTF8Reader(bytes.NewReader(head))
	if err != nil {
		return "", "", err
	}
	text, _ := io.ReadAll(dec) // a UTF-16 file cut mid-character decodes to U+FFFD: harmless here
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), sniffBytes*2)
	first, lines, stamped := "", 0, 0
	for sc.Scan() && lines < 200 {
		line := strings.TrimLeft(sc.Text(), "\ufeff\ufffd\x00 ")
		if strings.TrimSpace(line) == "" {
			continue
		}
		lines++
		if first == "" {
			first = line
			if strings.HasPrefix(line, "#TYPE ") {
				first = ""
				continue
			}
			if h := strings.ToLower(line); strings.ContainsAny(h, ",;\t|") {
				for _, c := range backupCols {
					if strings.Contains(h, c) && !strings.Contains(h, "restore_date") && !strings.Contains(h, "restoretype") {
						return Backups, fmt.Sprintf("backup history CSV (header names %s)", c), nil
					}
				}
				for _, c := range historyCols {
					if strings.Contains(h, c) {
						return History, fmt.Sprintf("history CSV (header names %s)", c), nil
					}
				}
			}
		}
		if stampRE.MatchString(line) {
			stamped++
			if stamped >= 2 || lines == 1 {
				return ErrorLog, "error log (timestamped entries)", nil
			}
		}
		if messageRE.MatchString(line) {
			return Messages, "captured RESTORE output (" + clip(line, 40) + ")", nil
		}
		if startsText(line) && !strings.Contains(line, "\t") {
			// English output is messageRE's; a localized line anywhere.
			if _, lang, ok := locale.Canonical(line); ok && lang != locale.English {
				return Messages, "captured RESTORE output, " + lang + " (" + clip(line, 40) + ")", nil
			}
		}
	}
	if stamped > 0 {
		return ErrorLog, "error log (timestamped entries)", nil
	}
	if first == "" {
		return "", "", fmt.Errorf("empty file")
	}
	return "", "", fmt.Errorf("not an error log, a restore history CSV or captured RESTORE output (first line %q)", clip(first, 60))
}

// startsText reports whether a line starts like engine output rather than a
// document's markup (Markdown headings, tables, quotes, lists, code).
func startsText(line string) bool {
	return line != "" && !strings.ContainsRune("#|>*`-\t", rune(line[0]))
}

// DetectStream is Detect for a stream that cannot be read twice (an
// upload): it returns a reader that yields the whole stream again, the
// bytes Detect looked at included.
func DetectStream(r io.Reader) (kind FileKind, why string, whole io.Reader, err error) {
	head, err := io.ReadAll(io.LimitReader(r, sniffBytes))
	if err != nil {
		return "", "", nil, err
	}
	kind, why, err = Detect(bytes.NewReader(head))
	return kind, why, io.MultiReader(bytes.NewReader(head), r), err
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
