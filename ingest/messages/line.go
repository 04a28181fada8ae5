package messages

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/ingest/unwrap"
)

// The engine's message texts (reference §2.4) as clients print them. They
// are matched anywhere in a message, not anchored, because Agent job text
// prefixes the first one with "Executed as user: DOMAIN\account.".
var (
	// 3014: "%hs successfully processed %I64d pages in %d.%03d seconds (%d.%03d MB/sec)."
	re3014 = regexp.MustCompile(`\b((?:RESTORE|BACKUP) (?:DATABASE|LOG)\b.*?) successfully processed (\d+) pages in (\d+(?:\.\d+)?) seconds \((\d+(?:\.\d+)?) MB/sec\)`)
	// 4035: "Processed %I64d pages for database '%ls', file '%ls' on file %d."
	// Names are printed unescaped, so the database runs to the first
	// "', file '", which a quote inside a name does not end.
	reProcessed = regexp.MustCompile(`Processed (\d+) pages for database '(.*?)', file '(.*)' on file (\d+)`)
	// 3211: "%d percent processed."
	rePercent = regexp.MustCompile(`^\d+ percent processed\.?$`)
	// 3013: "RESTORE DATABASE is terminating abnormally."
	reAbnormal = regexp.MustCompile(`\b(RESTORE|BACKUP) \w+ is terminating abnormally`)
	// 951, 944 and 4356 name the database too, and are kept as phases: an
	// upgrade of an older backup is part of what the restore cost.
	reUpgrade  = regexp.MustCompile(`Database '(.*)' running the upgrade step from version \d+ to version \d+`)
	reConvert  = regexp.MustCompile(`Converting database '(.*)' from version \d+ to the current version \d+`)
	reComplete = regexp.MustCompile(`Restore is complete on database '(.*)'\. +The database is now available`)
	// The statement itself, when the client echoed it (sqlcmd -e, a script
	// pasted above its output), names the database as a last resort.
	// It must end or go on with FROM or a file list, so that a localised
	// 3014 line ("RESTORE DATABASE hat erfolgreich ...") is not taken for one.
	// "WITH" follows the name in a recovery step ("RESTORE DATABASE d WITH
	// RECOVERY"), which reads no backup.
	reEcho     = regexp.MustCompile(`(?i)^RESTORE\s+(?:DATABASE|LOG)\s+(\[(?:[^\]]|\]\])+\]|[\p{L}_#][\p{L}\p{N}_@#$]*)\s*(?:$|;|FROM\b|WITH\b|FILE\s*=|FILEGROUP\s*=|PAGE\s*=|,)`)
	reEchoFrom = regexp.MustCompile(`(?i)\bFROM\s`)
	reEchoLog  = regexp.MustCompile(`(?i)^RESTORE\s+LOG\b`)
	reEchoPage = regexp.MustCompile(`(?i)\bPAGE\s*=`)
	// What the rest of an echoed statement says: NORECOVERY (a chain goes
	// on), METADATA_ONLY (a SQL Server 2022 snapshot backup restored: 0
	// pages read, yet a restore), and the device, whose name can say full
	// or differential.
	reEchoNoRecovery = regexp.MustCompile(`(?i)\b(NORECOVERY|STANDBY)\b`)
	reEchoMetadata   = regexp.MustCompile(`(?i)\bMETADATA_ONLY\b`)
	reEchoDevice     = regexp.MustCompile(`(?i)\b(?:DISK|URL|TAPE)\s*=?\s*N?'([^']+)'`)
	// A statement's continuation lines as scripts and echoes print them.
	reEchoMore = regexp.MustCompile(`(?i)^(?:WITH|FROM|MOVE|,|FILE\s*=|NORECOVERY|RECOVERY|STANDBY|REPLACE|STATS|METADATA_ONLY|NOUNLOAD|CHECKSUM|BUFFERCOUNT|MAXTRANSFERSIZE|STOPAT|DISK|URL)\b`)
	// A RESTORE DATABASE ... METADATA_ONLY built in a script variable
	// ($Query = "RESTORE DATABASE $DbName ... WITH METADATA_ONLY ...").
	reMetadataStmt = regexp.MustCompile(`(?i)\bRESTORE\s+DATABASE\b.*\bMETADATA_ONLY\b`)
	// An error log's restore completion line, quoted without its stamp.
	reLogCompletion = regexp.MustCompile(`\b(Database was restored: Database: |Database changes were restored\. Database: |Log was restored\. Database: |Database file (changes )?w(as|ere) restored\. Database: )`)
	// SSMS's client-side stamp, "Completion time: 2020-04-13T23:49:21.1600986-07:00".
	// The label is localised in localised SSMS, so any short label will do.
	reStamp = regexp.MustCompile(`^[^:\d]{1,60}:\s*(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d))$`)
	// The header SSMS and sqlcmd print above a message: "Msg 3013, Level 16,
	// State 1, Line 3", also with Server and Procedure parts and localised
	// ("Meldung 3013, Ebene 16, Status 1, Zeile 3").
	reHeader = regexp.MustCompile(`^[^\d,]{2,30} (\d+), [^\d,]{2,30} (\d+), [^\d,]{2,30} \d+(?:, .*)?$`)
	// Agent job text ends each message with "[SQLSTATE 01000] (Message 3014)";
	// the word is localised ("(Meldung 3014)", "(Ошибка 3621)").
	// SQLSTATE 01000 marks an informational message; any other an error.
	// The "(Message N)" part is missing from output written by sqlcmd -b
	// and some job logs.
	reMarker = regexp.MustCompile(`\s*\[SQLSTATE ([0-9A-Za-z]{5})\](?:\s*\(\S+ (\d+)\))?\.?`)
	// For localised 3014 texts, identified by their Agent message number.
	reStatement = regexp.MustCompile(`\b(?:RESTORE|BACKUP) (?:DATABASE|LOG)\b(?: \.\.\. \S+)?`)
	reNumber    = regexp.MustCompile(`\d+(?:[.,]\d+)?`)
	reQuoted    = regexp.MustCompile(`'([^']*)'`)
)

// message is one engine message: a line of SSMS or sqlcmd output, or one
// marker-delimited piece of an Agent job text.
type message struct {
	text string
	num  int  // message number when the client printed one, else 0
	err  bool // the client said it is an error (Level above 10, SQLSTATE not 01000)
}

// splitAgent cuts an Agent job text at its SQLSTATE markers; the text after
// the last marker ("The step succeeded.") becomes a message without number.
func splitAgent(s string) []message {
	locs := reMarker.FindAllStringSubmatchIndex(s, -1)
	out := make([]message, 0, len(locs)+1)
	from := 0
	for _, l := range locs {
		n := 0
		if l[4] >= 0 {
			n, _ = strconv.Atoi(s[l[4]:l[5]])
		}
		out = append(out, message{text: strings.TrimSpace(s[from:l[0]]), num: n, err: s[l[2]:l[3]] != "01000"})
		from = l[1]
	}
	if rest := strings.TrimSpace(s[from:]); rest != "" {
		out = append(out, message{text: rest})
	}
	return out
}

// done3014 is a parsed 3014 line.
type done3014 struct {
	statement string
	pages     int64
	seconds   float64
	mbps      float64
}

// parse3014 reads a 3014 message, in English or, when the client said it is
// message 3014, in any language: the statement keywords are never
// translated, and the last three numbers are pages, seconds and MB/sec.
func parse3014(m message) (done3014, bool) {
	if g := re3014.FindStringSubmatch(m.text); g != nil {
		return done3014{statement: g[1], pages: atoi(g[2]), seconds: atof(g[3]), mbps: atof(g[4])}, true
	}
	if m.num != 3014 {
		return done3014{}, false
	}
	loc := reStatement.FindStringIndex(m.text)
	if loc == nil {
		return done3014{}, false
	}
	nums := reNumber.FindAllString(m.text[loc[1]:], -1)
	if len(nums) < 3 {
		return done3014{}, false
	}
	nums = nums[len(nums)-3:]
	return done3014{statement: m.text[loc[0]:loc[1]], pages: atoi(nums[0]), seconds: atof(nums[1]), mbps: atof(nums[2])}, true
}

// processedDatabase returns the database a 4035 message names; a localised
// one (known by its number) names it in its first quoted string.
func processedDatabase(m message) (string, bool) {
	if g := reProcessed.FindStringSubmatch(m.text); g != nil {
		return unwrap.Name(g[2]), true
	}
	if m.num == 4035 {
		if g := reQuoted.FindStringSubmatch(m.text); g != nil && g[1] != "" {
			return unwrap.Name(g[1]), true
		}
	}
	return "", false
}

// databaseHint returns the database named by a message that is not 4035 but
// still says which database the statement works on.
func databaseHint(text string) (string, bool) {
	for _, re := range []*regexp.Regexp{reUpgrade, reConvert, reComplete} {
		if g := re.FindStringSubmatch(text); g != nil {
			return unwrap.Name(g[1]), true
		}
	}
	return "", false
}

// echo is what an echoed RESTORE statement says about the output after it.
type echo struct {
	database string
	log      bool // RESTORE LOG
	from     bool // it names a backup device: it reads a backup
	page     bool // PAGE = '...': a page restore
	// norecovery: WITH NORECOVERY or STANDBY, the chain goes on;
	// metadataOnly: WITH METADATA_ONLY; device: the first backup device.
	norecovery, metadataOnly bool
	device                   string
}

// echoed reads an echoed RESTORE statement.
func echoed(text string) (echo, bool) {
	g := reEcho.FindStringSubmatch(text)
	if g == nil {
		if reMetadataStmt.MatchString(text) {
			// Built in a script's variable: no name to read, but what it is.
			e := echo{from: true}
			e.more(text)
			return e, true
		}
		return echo{}, false
	}
	name := g[1]
	if strings.HasPrefix(name, "[") {
		name = unwrap.Name(name)
	} else if u := strings.ToUpper(name); u == "WITH" || u == "FROM" {
		return echo{}, false
	}
	e := echo{database: name, log: reEchoLog.MatchString(text)}
	e.more(text)
	return e, true
}

// more reads a line of the echoed statement (its first or a continuation).
func (e *echo) more(text string) {
	e.from = e.from || reEchoFrom.MatchString(text)
	e.page = e.page || reEchoPage.MatchString(text)
	e.norecovery = e.norecovery || reEchoNoRecovery.MatchString(text)
	e.metadataOnly = e.metadataOnly || reEchoMetadata.MatchString(text)
	if g := reEchoDevice.FindStringSubmatch(text); g != nil && e.device == "" {
		e.device = g[1]
	}
}

// parseStamp reads SSMS's completion stamp into a local wall-clock reading
// (in a UTC location, as store expects) and its offset in minutes.
func parseStamp(text string) (time.Time, int, bool) {
	g := reStamp.FindStringSubmatch(text)
	if g == nil {
		return time.Time{}, 0, false
	}
	t, err := time.Parse(time.RFC3339Nano, g[1])
	if err != nil {
		return time.Time{}, 0, false
	}
	wall, off := wallClock(t)
	return wall, off, true
}

// wallClock splits t into its wall-clock reading and UTC offset in minutes.
func wallClock(t time.Time) (time.Time, int) {
	_, off := t.Zone()
	wall := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	return wall, off / 60
}

func atoi(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return -1 // beyond int64: Validate rejects the negative count
	}
	return n
}

func atof(s string) float64 {
	f, _ := strconv.ParseFloat(strings.Replace(s, ",", ".", 1), 64)
	return f
}
