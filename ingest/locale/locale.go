// Package locale recognises SQL Server's restore and backup messages in the
// languages the engine ships, and rewrites them into the exact English text
// the English parsers of ingest/errorlog and ingest/messages read.
//
// SQL Server prints its messages (error log and client output) in the
// installation's language. The statement names ("RESTORE DATABASE", "BACKUP
// LOG") are never translated; the words around the numbers are. Each localized
// text known here comes from public material named beside it in texts_*.go and
// in testdata/realworld/localized/README.md; a language or message without a
// public source is left out rather than guessed, and LooksLikeRestoreStat
// still catches its 3014 lines so that a parser can reject them as
// "unrecognised language" instead of skipping them silently.
package locale

import (
	"strings"
	"unicode/utf8"
)

// The languages of SQL Server's message catalogue, as Canonical reports them.
const (
	English            = "en"
	German             = "de"
	French             = "fr"
	Japanese           = "ja"
	Spanish            = "es"
	Italian            = "it"
	PortugueseBrazil   = "pt-BR"
	Russian            = "ru"
	Korean             = "ko"
	ChineseSimplified  = "zh-CN"
	ChineseTraditional = "zh-TW"
)

// Canonical rewrites a localized restore/backup message text (the message
// text only, without the error-log timestamp/source columns) into the exact
// English text SQL Server prints for the same message, with numbers
// normalised (decimal comma -> dot, full-width digits/punctuation -> ASCII),
// so the existing English parsers can read it. ok is false when the text is
// none of the messages above in any known language (English input returns
// itself, lang "en").
//
// Recognised: 3014 (RESTORE and BACKUP forms: the statement is kept, so a
// parser ignores "BACKUP ..." as it does in English), 4035, 3211, 3013 and the
// completion messages 18267, 18268, 18269, 18271, 18277 (and the backup
// completions 18264, 18265 where a localized text is known). Identifiers,
// paths, LSNs and device information are copied as printed.
func Canonical(text string) (english string, lang string, ok bool) {
	m, ok := match(text)
	if !ok {
		return "", "", false
	}
	if m.form.lang == English {
		return text, English, true
	}
	return m.english(), m.form.lang, true
}

// Message is what Canonical recognised, for callers that want the message
// number and the source of the text as well.
type Message struct {
	Number  int    // 3014, 4035, 3211, 3013, 18267 ...
	Lang    string // one of the language constants
	English string // the canonical English text
	Source  string // where the localized template was found
}

// Recognise is Canonical with the message number and source.
func Recognise(text string) (Message, bool) {
	m, ok := match(text)
	if !ok {
		return Message{}, false
	}
	en := text
	if m.form.lang != English {
		en = m.english()
	}
	return Message{Number: m.form.msg, Lang: m.form.lang, English: en, Source: m.form.src}, true
}

// LooksLikeRestoreStat reports whether text has the shape of a 3014/4035-style
// statistic (a count of pages, a number of seconds and a rate, in any script)
// though Canonical did not recognise it: such a line is rejected by the
// parsers as "looks like a restore message in an unrecognised language".
//
// The shape is the engine's own arithmetic, which no translation changes: a
// RESTORE or BACKUP statement name, then three numbers of which the last two
// are printed "%d.%03d" (dot or comma, ASCII or full-width digits), the last
// one followed by a rate unit ("MB/sec", "MБ/сек", "MB/秒" ...: a slash).
// Texts Canonical recognises return false.
func LooksLikeRestoreStat(text string) bool {
	i := statementAt(text)
	if i < 0 {
		return false
	}
	if _, ok := match(text); ok {
		return false
	}
	nums := scanNumbers(text[i:], 8)
	if len(nums) < 3 {
		return false
	}
	for k := 0; k+2 < len(nums); k++ {
		a, b, c := nums[k], nums[k+1], nums[k+2]
		if a.frac == 0 && b.frac == 3 && c.frac == 3 && hasUnitSlash(text[i+c.end:]) {
			return true
		}
	}
	return false
}

// statementAt returns where "RESTORE " or "BACKUP " starts in s, or -1.
func statementAt(s string) int {
	r := strings.Index(s, "RESTORE ")
	b := strings.Index(s, "BACKUP ")
	switch {
	case r < 0:
		return b
	case b < 0 || r < b:
		return r
	}
	return b
}

// number is a run of digits in a text, with its fractional digits counted.
type number struct {
	end  int // byte offset just after it
	frac int // digits after a decimal point or comma, 0 if none
}

// scanNumbers finds up to max numbers ("123", "1.234", "1,234", full-width
// digits too) in s.
func scanNumbers(s string, max int) []number {
	var out []number
	for i := 0; i < len(s) && len(out) < max; {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !isDigitRune(r) {
			i += w
			continue
		}
		j := skipDigits(s, i)
		n := number{end: j}
		if j < len(s) {
			p, pw := utf8.DecodeRuneInString(s[j:])
			if isDecimalMark(p) && j+pw < len(s) {
				if d, _ := utf8.DecodeRuneInString(s[j+pw:]); isDigitRune(d) {
					k := skipDigits(s, j+pw)
					n.frac = utf8.RuneCountInString(s[j+pw : k])
					n.end = k
				}
			}
		}
		out = append(out, n)
		i = n.end
	}
	return out
}

func skipDigits(s string, i int) int {
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !isDigitRune(r) {
			break
		}
		i += w
	}
	return i
}

// hasUnitSlash reports whether a rate unit ("MB/sec", "Mo/s", "MB/秒") follows
// within a few characters: a slash, ASCII or full-width, within 12 bytes.
func hasUnitSlash(s string) bool {
	if len(s) > 16 {
		s = s[:16]
	}
	return strings.Contains(s, "/") || strings.Contains(s, "／")
}

func isDigitRune(r rune) bool { return ('0' <= r && r <= '9') || ('０' <= r && r <= '９') }

func isDecimalMark(r rune) bool { return r == '.' || r == ',' || r == '．' || r == '，' }

// normNumber turns a printed number into ASCII with a decimal point:
// "０．１５０" and "0,150" both become "0.150".
func normNumber(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c == ',' {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case '０' <= r && r <= '９':
			b.WriteByte(byte('0' + r - '０'))
		case isDecimalMark(r):
			b.WriteByte('.')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
