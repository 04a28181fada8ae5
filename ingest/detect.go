package ingest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/restorewatch/restorewatch/ingest/console"
	"github.com/restorewatch/restorewatch/ingest/locale"
	"github.com/restorewatch/restorewatch/ingest/textenc"
	"github.com/restorewatch/restorewatch/ingest/unwrap"
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
	// The error log's restore messages quoted without a usable stamp (a KB
	// article's "Date Time Backup Log was restored. ..."): an error log
	// whose lines the parser must name and reject, not a file to skip.
	untimedLogRE = regexp.MustCompile(`\b(Database was restored: Database: |Database changes were restored\. Database: |Log was restored\. Database: |Database file (changes )?w(as|ere) restored\. Database: )`)
)

// Detect tells a file's kind from its first bytes (decoded from UTF-16 or
// UTF-8 as the parsers do) and says why, in words a summary can show. A file
// of none of the kinds is an error that names what its first line looks like.
func Detect(r io.Reader) (kind FileKind, why string, err error) {
	head, err := io.ReadAll(io.LimitReader(r, sniffBytes))
	if err != nil {
		return "", "", err
	}
	if sh, ok := console.Sniff(head); ok {
		return consoleKind(sh), sh.String(), nil
	}
	dec, err := textenc.UTF8Reader(bytes.NewReader(head))
	if err != nil {
		return "", "", err
	}
	text, _ := io.ReadAll(dec) // a UTF-16 file cut mid-character decodes to U+FFFD: harmless here
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), sniffBytes*2)
	var sn sniff
	var strip unwrap.Stripper
	for sc.Scan() && sn.lines < 200 {
		// Detection reads the text the messages parser reads, through the
		// same unwrap.Text: without the wrappers and client prefixes it came
		// in (web page, Markdown, container log, impacket, Command N:).
		lines, _, _ := strip.Text(sc.Text())
		for _, line := range lines {
			if k, w, done := sn.line(line); done {
				return k, w + inside(&strip), nil
			}
		}
	}
	switch {
	case sn.stamped > 0:
		return ErrorLog, "error log (timestamped entries)" + inside(&strip), nil
	case sn.untimed > 0:
		// Read as an error log, so that each such line is rejected at its
		// file:line instead of the file being skipped whole.
		return ErrorLog, "error-log restore messages without usable timestamps" + inside(&strip), nil
	case sn.first == "":
		return "", "", fmt.Errorf("empty file")
	}
	return "", "", fmt.Errorf("not an error log, a restore history CSV or captured RESTORE output (first line %q)", clip(sn.first, 60))
}

// sniff is what Detect has seen so far.
type sniff struct {
	first                   string // the first line with text
	lines, stamped, untimed int
}

// inside names the wrappers detection removed, for the summary.
func inside(s *unwrap.Stripper) string {
	if w := s.Removed(); len(w) > 0 {
		return ", inside " + strings.Join(w, ", ")
	}
	return ""
}

// line looks at one line of text without its wrappers; done says the kind
// is decided.
func (sn *sniff) line(line string) (kind FileKind, why string, done bool) {
	if strings.TrimSpace(line) == "" {
		return "", "", false
	}
	sn.lines++
	if sn.first == "" {
		sn.first = line
		if strings.HasPrefix(line, "#TYPE ") {
			sn.first = ""
			return "", "", false
		}
		if h := strings.ToLower(line); strings.ContainsAny(h, ",;\t|") {
			for _, c := range backupCols {
				if strings.Contains(h, c) && !strings.Contains(h, "restore_date") && !strings.Contains(h, "restoretype") {
					return Backups, fmt.Sprintf("backup history CSV (header names %s)", c), true
				}
			}
			for _, c := range historyCols {
				if strings.Contains(h, c) {
					return History, fmt.Sprintf("history CSV (header names %s)", c), true
				}
			}
		}
	}
	if stampRE.MatchString(line) {
		sn.stamped++
		if sn.stamped >= 2 || sn.lines == 1 {
			return ErrorLog, "error log (timestamped entries)", true
		}
	}
	if messageRE.MatchString(line) {
		return Messages, "captured RESTORE output (" + clip(line, 40) + ")", true
	}
	if untimedLogRE.MatchString(line) {
		sn.untimed++
	}
	if startsText(line) && !strings.Contains(line, "\t") {
		// English output is messageRE's; a localized line anywhere.
		if _, lang, ok := locale.Canonical(line); ok && lang != locale.English {
			return Messages, "captured RESTORE output, " + lang + " (" + clip(line, 40) + ")", true
		}
	}
	return "", "", false
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

// consoleKind is the kind a dbatools console capture is imported as: its
// command's Export-Csv's (the console reader then takes it, see asConsole).
func consoleKind(sh console.Shape) FileKind {
	if sh.Command == console.GetDbaDbBackupHistory {
		return Backups
	}
	return History
}

// asConsole peeks at a stream named history, messages or backups: dbatools
// results printed on a console are read by ingest/console whichever of
// these kinds was given (import messages on a Format-List of
// Restore-DbaDatabase reads its restores, not nothing). whole yields the
// stream from its start.
func asConsole(r io.Reader) (sh console.Shape, ok bool, whole io.Reader) {
	br := bufio.NewReaderSize(r, sniffBytes)
	head, _ := br.Peek(sniffBytes)
	sh, ok = console.Sniff(head)
	return sh, ok, br
}
