package locale_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/locale"
)

const fixtures = "../../testdata/realworld/localized"

// expectation is one row of expect.tsv.
type expectation struct {
	lang, english string
	msg           int
}

func readExpect(t *testing.T) map[string]expectation {
	t.Helper()
	f, err := os.Open(filepath.Join(fixtures, "expect.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]expectation{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := strings.Split(line, "\t")
		if len(c) != 5 {
			t.Fatalf("expect.tsv:%d: %d columns, want 5", n, len(c))
		}
		msg, err := strconv.Atoi(c[3])
		if err != nil {
			t.Fatalf("expect.tsv:%d: message %q", n, c[3])
		}
		out[c[0]+":"+c[1]] = expectation{lang: c[2], msg: msg, english: c[4]}
	}
	return out
}

var (
	// The error-log columns a parser strips before it hands the text on.
	logPrefix = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \S+\s+`)
	// The Agent marker a parser strips ("... [SQLSTATE 01000]").
	agentMarker = regexp.MustCompile(`\s*\[SQLSTATE [0-9A-Z]{5}\].*$`)
)

// messageText is what a parser would pass to Canonical for a fixture line.
func messageText(line string) string {
	s := logPrefix.ReplaceAllString(line, "")
	s = agentMarker.ReplaceAllString(s, "")
	s = strings.TrimSpace(s)
	for strings.HasPrefix(s, "--") {
		s = strings.TrimSpace(s[2:])
	}
	return s
}

// TestFixtures runs every line of every fixture file: the lines expect.tsv
// names must come out as the English text it gives, in its language, and
// every other line must be neither recognised nor taken for a restore
// statistic (they are real neighbouring lines: job headers, login failures,
// rollback progress, other errors).
func TestFixtures(t *testing.T) {
	want := readExpect(t)
	files, err := filepath.Glob(filepath.Join(fixtures, "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	seen := 0
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(path)
		for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			at := name + ":" + strconv.Itoa(i+1)
			text := messageText(line)
			got, lang, ok := locale.Canonical(text)
			stat := locale.LooksLikeRestoreStat(text)
			w, listed := want[at]
			switch {
			case !listed:
				if ok || stat {
					t.Errorf("%s: %q recognised (%v %q %q) or stat (%v), want neither", at, line, ok, lang, got, stat)
				}
			case w.english == "stat":
				seen++
				if ok || !stat {
					t.Errorf("%s: %q: ok=%v stat=%v, want an unrecognised restore statistic", at, line, ok, stat)
				}
			default:
				seen++
				if !ok || got != w.english || lang != w.lang {
					t.Errorf("%s: %q\n got %v %q %q\nwant true %q %q", at, line, ok, lang, got, w.lang, w.english)
				}
				if m, _ := locale.Recognise(text); m.Number != w.msg || m.Source == "" {
					t.Errorf("%s: message %d source %q, want %d and a source", at, m.Number, m.Source, w.msg)
				}
				if stat {
					t.Errorf("%s: recognised text also reported as unrecognised statistic", at)
				}
			}
		}
	}
	if seen != len(want) {
		t.Errorf("expect.tsv lists %d lines, %d found in the fixtures", len(want), seen)
	}
}

// TestCanonicalForms covers what the fixtures do not hold verbatim: decimal
// commas, full-width digits and punctuation, RESTORE LOG and BACKUP forms
// built from the same real texts, and English input.
func TestCanonicalForms(t *testing.T) {
	for _, c := range []struct {
		name, in, lang, want string
	}{
		{"english 3014 is itself", "RESTORE DATABASE successfully processed 58455 pages in 18.069 seconds (25.273 MB/sec).", "en",
			"RESTORE DATABASE successfully processed 58455 pages in 18.069 seconds (25.273 MB/sec)."},
		{"english 18267 is itself", "Database was restored: Database: A, creation date(time): 2024/01/01(00:00:00), first LSN: 10:20:1, last LSN: 10:44:1, number of dump devices: 1, device information: (FILE=1, TYPE=DISK: {'/backup/A.bak'}). Informational message. No user action required.", "en",
			"Database was restored: Database: A, creation date(time): 2024/01/01(00:00:00), first LSN: 10:20:1, last LSN: 10:44:1, number of dump devices: 1, device information: (FILE=1, TYPE=DISK: {'/backup/A.bak'}). Informational message. No user action required."},
		{"english 18268 other trailer", "Log was restored. Database: B, creation date(time): 2024/01/01(00:00:00), first LSN: 1:2:3, last LSN: 4:5:6, number of dump devices: 1, device information: (FILE=2, TYPE=DISK: {'/b/B.trn'}). This is an informational message. No user action is required.", "en",
			"Log was restored. Database: B, creation date(time): 2024/01/01(00:00:00), first LSN: 1:2:3, last LSN: 4:5:6, number of dump devices: 1, device information: (FILE=2, TYPE=DISK: {'/b/B.trn'}). This is an informational message. No user action is required."},
		{"english 4035 is itself", "Processed 296 pages for database 'demodb', file 'demodb' on file 1.", "en", "Processed 296 pages for database 'demodb', file 'demodb' on file 1."},
		{"german decimal comma 3211", "7 Prozent verarbeitet.", "de", "7 percent processed."},
		{"spanish decimal comma", "RESTORE LOG procesó correctamente 12 páginas en 0,004 segundos (23,437 MB/s).", "es",
			"RESTORE LOG successfully processed 12 pages in 0.004 seconds (23.437 MB/sec)."},
		{"russian decimal comma, log", "RESTORE LOG успешно обработал 40 страниц за 0,010 секунд (31,250 MБ/сек).", "ru",
			"RESTORE LOG successfully processed 40 pages in 0.010 seconds (31.250 MB/sec)."},
		{"russian backup log", "BACKUP LOG успешно обработал 7 страниц за 0.003 секунд (18.229 MБ/сек).", "ru",
			"BACKUP LOG successfully processed 7 pages in 0.003 seconds (18.229 MB/sec)."},
		{"japanese full-width digits and brackets", "RESTORE DATABASE により ２５７９３ ページが ２．１９１ 秒間で正常に処理されました （９１．９６７ MB/秒）。", "ja",
			"RESTORE DATABASE successfully processed 25793 pages in 2.191 seconds (91.967 MB/sec)."},
		{"japanese no spaces", "RESTORE LOGにより1ページが0.010秒間で正常に処理されました(0.781 MB/秒)。", "ja",
			"RESTORE LOG successfully processed 1 pages in 0.010 seconds (0.781 MB/sec)."},
		{"japanese 4035 full-width quotes kept as printed", "データベース 'ｄｂ１' の ７ ページ、ファイル １ のファイル 'ｄｂ１_log' を処理しました。", "ja",
			"Processed 7 pages for database 'ｄｂ１', file 'ｄｂ１_log' on file 1."},
		{"japanese backup", "BACKUP DATABASE により 378 ページが 1.223 秒間で正常に処理されました (2.531 MB/秒)。", "ja",
			"BACKUP DATABASE successfully processed 378 pages in 1.223 seconds (2.531 MB/sec)."},
		{"chinese full-width comma decimal", "RESTORE LOG 成功处理了 ４０ 页，花费 ０，０１０ 秒(３１，２５０ MB/秒)。", "zh-CN",
			"RESTORE LOG successfully processed 40 pages in 0.010 seconds (31.250 MB/sec)."},
		{"chinese 4035 path with brackets kept", "已为数据库 'Sales (2024)'，文件 'Sales_data' (位于文件 2 上)处理了 1200 页。", "zh-CN",
			"Processed 1200 pages for database 'Sales (2024)', file 'Sales_data' on file 2."},
		{"chinese backup with differential", "BACKUP DATABASE WITH DIFFERENTIAL 成功处理了 58 页，花费 0.015 秒(29.947 MB/秒)。", "zh-CN",
			"BACKUP DATABASE WITH DIFFERENTIAL successfully processed 58 pages in 0.015 seconds (29.947 MB/sec)."},
		{"korean log", "RESTORE LOG이(가) 40개의 페이지를 0.010초 동안 처리했습니다(31.250MB/초).", "ko",
			"RESTORE LOG successfully processed 40 pages in 0.010 seconds (31.250 MB/sec)."},
		{"agent prefix before the message", "Executed as user: CONTOSO\\agent. RESTORE DATABASE 成功处理了 177 页，花费 0.716 秒(2.025 MB/秒)。", "zh-CN",
			"RESTORE DATABASE successfully processed 177 pages in 0.716 seconds (2.025 MB/sec)."},
		{"pt-BR backup 3013", "BACKUP LOG está sendo encerrado de forma anormal.", "pt-BR", "BACKUP LOG is terminating abnormally."},
		{"japanese 3013", "RESTORE DATABASE は異常終了しました。", "ja", "RESTORE DATABASE is terminating abnormally."},
	} {
		got, lang, ok := locale.Canonical(c.in)
		if !ok || got != c.want || lang != c.lang {
			t.Errorf("%s: Canonical(%q)\n got %v %q %q\nwant true %q %q", c.name, c.in, ok, lang, got, c.lang, c.want)
		}
	}
}

// TestBackupStaysBackup: a BACKUP statement's 3014 and 3013 come out as
// BACKUP, so the parsers ignore them as they ignore the English ones.
func TestBackupStaysBackup(t *testing.T) {
	for _, in := range []string{
		"BACKUP DATABASE procesó correctamente 562 páginas en 0.286 segundos (15.338 MB/s).",
		"BACKUP DATABASE WITH DIFFERENTIAL успешно обработал 58 страниц за 0.015 секунд (29.947 MБ/сек).",
		"BACKUP DATABASE 成功处理了 378 页，花费 1.223 秒(2.531 MB/秒)。",
		"BACKUP LOG により 3 ページが 0.004 秒間で正常に処理されました (5.859 MB/秒)。",
		"BACKUP DATABASE이(가) 378개의 페이지를 1.223초 동안 처리했습니다(2.531MB/초).",
		"BACKUP DATABASE прервано с ошибкой.",
	} {
		got, _, ok := locale.Canonical(in)
		if !ok || !strings.HasPrefix(got, "BACKUP ") {
			t.Errorf("Canonical(%q) = %v %q, want a BACKUP text", in, ok, got)
		}
	}
}

// TestNotRestoreMessages: ordinary log lines, English and localized, with
// digits, quotes and the words of the restore messages, are not taken for
// them — neither recognised nor reported as unrecognised statistics.
func TestNotRestoreMessages(t *testing.T) {
	for _, in := range []string{
		"",
		"Login failed for user 'sa'. Reason: Password did not match that for the login provided. [CLIENT: 10.0.0.5]",
		"Starting up database 'msdb'.",
		"Recovery completed for database Sales (database ID 5) in 1 second(s) (analysis 3 ms, redo 0 ms, undo 0 ms.) This is an informational message only. No user action is required.",
		"Restore is complete on database 'AdventureWorks'.  The database is now available.",
		"Database 'WideWorldImporters' running the upgrade step from version 868 to version 869.",
		"RESTORE DATABASE Sales FROM DISK = N'C:\\b\\Sales 1.5 GB.bak' WITH FILE = 1, STATS = 10",
		"BACKUP DATABASE [Sales] TO DISK = N'/var/opt/mssql/data/Sales.bak' WITH STATS = 10",
		"Fehler bei der Anmeldung für den Benutzer 'sa'. Ursache: Das Kennwort stimmt nicht. [CLIENT: 10.0.0.5]",
		"Die Datenbank 'Lager' wird gestartet.",
		"Es wurden 12 Zeilen verarbeitet.",
		"10 Prozent der Seiten gelesen",
		"Сообщение 3013, уровень 16, состояние 1, строка 84",
		"消息 3013，级别 16，状态 1，第 1 行",
		"percent processed.",
		"RESTORE DATABASE successfully processed pages in seconds (MB/sec).",
		"Processed 12 pages for database",
		"Copied 1.234 GB in 12.345 s (100.000 MB/s), from RESTORE staging area",
	} {
		if got, lang, ok := locale.Canonical(in); ok {
			t.Errorf("Canonical(%q) = %q %q, want not recognised", in, got, lang)
		}
		if locale.LooksLikeRestoreStat(in) {
			t.Errorf("LooksLikeRestoreStat(%q) = true, want false", in)
		}
	}
}

// TestUnrecognisedLanguageStat: a 3014 text in a language without a public
// source (the shape is built on the English one: the same three numbers, the
// statement left in English) is caught by LooksLikeRestoreStat, whatever its
// decimal mark, script or unit.
func TestUnrecognisedLanguageStat(t *testing.T) {
	for _, in := range []string{
		"RESTORE DATABASE 操作成功地处理了 177 页,花费了 0.716 秒(2.025 MB/秒)。",
		"RESTORE DATABASE xyzzy 177 plugh 0,716 frobs (2,025 XB/qq).",
		"RESTORE LOG ｘ ４０ ｙ ０．０１０ ｚ （３１．２５０ MB／秒）",
	} {
		if _, _, ok := locale.Canonical(in); ok {
			t.Errorf("Canonical(%q) recognised an unknown text", in)
		}
		if !locale.LooksLikeRestoreStat(in) {
			t.Errorf("LooksLikeRestoreStat(%q) = false, want true", in)
		}
	}
	// A recognised line is not an unrecognised statistic.
	if locale.LooksLikeRestoreStat("RESTORE DATABASE successfully processed 1 pages in 0.010 seconds (0.781 MB/sec).") {
		t.Error("an English 3014 line reported as unrecognised")
	}
}

// TestEnglishOutputIsEnglish: every localized form's English output is
// recognised again as English, unchanged.
func TestEnglishOutputIsEnglish(t *testing.T) {
	want := readExpect(t)
	files, _ := filepath.Glob(filepath.Join(fixtures, "*.txt"))
	n := 0
	for _, path := range files {
		b, _ := os.ReadFile(path)
		for _, line := range strings.Split(string(b), "\n") {
			en, lang, ok := locale.Canonical(messageText(line))
			if !ok || lang == locale.English {
				continue
			}
			n++
			again, l2, ok2 := locale.Canonical(en)
			if !ok2 || l2 != locale.English || again != en {
				t.Errorf("English output %q re-read as %v %q %q", en, ok2, l2, again)
			}
		}
	}
	if n < len(want)/2 {
		t.Errorf("only %d localized lines checked", n)
	}
}
