package locale

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A text is one localized message template, written with named placeholders
// in braces where the engine fills in a value ("{pages}", "{db}", see slots).
// Templates are matched tolerantly, because the documentation's translation
// can differ in small ways from what the engine prints and because copied
// output changes punctuation: a space matches any run of white space (or
// none), ". , ( ) : %" match their full-width and ideographic forms too, a
// quote matches any quote mark, and the final full stop is optional.
type text struct {
	msg  int    // message number
	lang string // language constant
	tmpl string // the template
	src  string // where it was found (URL, or repository and path)
}

// slots are the placeholders a template may hold, with what they match.
// Numbers accept full-width digits and a decimal comma; names run to the next
// piece of the template (non-greedy); device information and file lists run to
// the last closing parenthesis before the trailer.
var slots = map[string]string{
	"stmt":   `\b((?:RESTORE|BACKUP) [^\n]*?)`,
	"pages":  `([0-9０-９]+)`,
	"dumped": `([0-9０-９]+)`,
	"secs":   `([0-9０-９]+(?:[.,．，][0-9０-９]+)?)`,
	"rate":   `([0-9０-９]+(?:[.,．，][0-9０-９]+)?)`,
	"pct":    `([0-9０-９]+)`,
	"fileno": `([0-9０-９]+)`,
	"ndev":   `([0-9０-９]+)`,
	"db":     `(.+?)`,
	"file":   `(.+?)`,
	"cdate":  `([^()（）]*?)`,
	"ctime":  `([^()（）]*?)`,
	"first":  `([0-9]+:[0-9]+:[0-9]+)`,
	"last":   `([0-9]+:[0-9]+:[0-9]+)`,
	"flist":  `(.*?)`,
	"dev":    `(.*)`,
	"any":    `(?:.*?)`,
	"unit":   `(?:[^()（）]{0,16}?)`,
}

// english is the exact English text of each message, with the slots it takes.
var english = map[int]string{
	3014:  "{stmt} successfully processed {pages} pages in {secs} seconds ({rate} MB/sec).",
	4035:  "Processed {pages} pages for database '{db}', file '{file}' on file {fileno}.",
	3211:  "{pct} percent processed.",
	3013:  "{stmt} is terminating abnormally.",
	18264: "Database backed up. Database: {db}, creation date(time): {cdate}({ctime}), pages dumped: {dumped}, first LSN: {first}, last LSN: {last}, number of dump devices: {ndev}, device information: ({dev}). This is an informational message only. No user action is required.",
	18265: "Log was backed up. Database: {db}, creation date(time): {cdate}({ctime}), first LSN: {first}, last LSN: {last}, number of dump devices: {ndev}, device information: ({dev}). This is an informational message only. No user action is required.",
	18267: "Database was restored: Database: {db}, creation date(time): {cdate}({ctime}), first LSN: {first}, last LSN: {last}, number of dump devices: {ndev}, device information: ({dev}). Informational message. No user action required.",
	18268: "Log was restored. Database: {db}, creation date(time): {cdate}({ctime}), first LSN: {first}, last LSN: {last}, number of dump devices: {ndev}, device information: ({dev}). This is an informational message. No user action is required.",
	18269: "Database file was restored. Database: {db}, creation date(time): {cdate}({ctime}), file list: ({flist}), number of dump devices: {ndev}, device information: ({dev}). This is an informational message. No user action is required.",
	18271: "Database changes were restored. Database: {db}, creation date(time): {cdate}({ctime}), first LSN: {first}, last LSN: {last}, number of dump devices: {ndev}, device information: ({dev}). This is an informational message. No user action is required.",
	18277: "Database file changes were restored. Database: {db}, creation date(time): {cdate}({ctime}), file list: ({flist}), number of dump devices: {ndev}, device information: ({dev}). This is an informational message only. No user action is required.",
}

// numeric slots are normalised to ASCII with a decimal point; the others are
// copied as printed.
var numeric = map[string]bool{"pages": true, "dumped": true, "secs": true, "rate": true, "pct": true, "fileno": true, "ndev": true}

// form is a compiled text.
type form struct {
	text
	key   string         // a literal the text must contain (the cheap pre-filter)
	re    *regexp.Regexp // the tolerant match, anchored at the end
	names []string       // slot name of each capture group
}

// matched is a form and the values its slots captured.
type matched struct {
	form *form
	vals map[string]string
}

// english renders the English text of the matched message.
func (m matched) english() string {
	t := english[m.form.msg]
	var b strings.Builder
	b.Grow(len(t) + 64)
	for {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			b.WriteString(t)
			return b.String()
		}
		j := strings.IndexByte(t[i:], '}')
		b.WriteString(t[:i])
		b.WriteString(m.vals[t[i+1:i+j]])
		t = t[i+j+1:]
	}
}

// compile turns a template into its form; it panics on a malformed template,
// which a test of every table catches.
func compile(t text) *form {
	if _, ok := english[t.msg]; !ok {
		panic(fmt.Sprintf("locale: no English text for message %d", t.msg))
	}
	f := &form{text: t}
	var re strings.Builder
	re.WriteString(`(?s)`)
	s := t.tmpl
	var lit strings.Builder // current literal run, for the key
	flush := func() {
		if l := strings.TrimSpace(lit.String()); len(l) > len(f.key) {
			f.key = l
		}
		lit.Reset()
	}
	for s != "" {
		if s[0] == '{' {
			j := strings.IndexByte(s, '}')
			name := s[1:j]
			p, ok := slots[name]
			if !ok {
				panic(fmt.Sprintf("locale: unknown slot %q in %q", name, t.tmpl))
			}
			re.WriteString(p)
			if name != "any" && name != "unit" {
				f.names = append(f.names, name)
			}
			flush()
			s = s[j+1:]
			continue
		}
		r, w := utf8.DecodeRuneInString(s)
		s = s[w:]
		last := strings.TrimSpace(s) == ""
		switch {
		case unicode.IsSpace(r):
			// A space may be missing or doubled in copied output, so it
			// matches any run and ends the key's literal.
			re.WriteString(`\s*`)
		case r == '.' || r == '。' || r == '．':
			if last {
				re.WriteString(`[.。．]?`)
			} else {
				re.WriteString(`[.。．]`)
			}
		case r == ',' || r == '，' || r == '、':
			re.WriteString(`[,，、]`)
		case r == '(' || r == '（':
			re.WriteString(`[(（]`)
		case r == ')' || r == '）':
			re.WriteString(`[)）]`)
		case r == ':' || r == '：':
			re.WriteString(`[:：]`)
		case r == '%' || r == '％':
			re.WriteString(`[%％]`)
		case strings.ContainsRune(quotes, r):
			re.WriteString(`[` + quotes + `]`)
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
			lit.WriteRune(r)
			continue
		}
		flush()
	}
	flush()
	re.WriteString(`\s*$`)
	f.re = regexp.MustCompile(re.String())
	if f.key == "" {
		panic(fmt.Sprintf("locale: template %q has no literal text", t.tmpl))
	}
	return f
}

// quotes are the quote marks a name may be printed between.
const quotes = `'"‘’“”«»„「」『』`

// forms holds every compiled text, English first.
var forms = func() []*form {
	var all []text
	for _, ts := range [][]text{englishTexts, germanTexts, frenchTexts, japaneseTexts, spanishTexts,
		italianTexts, portugueseTexts, russianTexts, koreanTexts, chineseSimplifiedTexts, chineseTraditionalTexts} {
		all = append(all, ts...)
	}
	out := make([]*form, len(all))
	for i, t := range all {
		out[i] = compile(t)
	}
	if len(out) > maxForms {
		panic("locale: more forms than the tried-set holds")
	}
	return out
}()

// maxForms bounds the forms, so that the set of forms tried for one text is
// a fixed-size bitmask.
const maxForms = 128

// keyIndex finds the forms whose key occurs in a text in one pass over it:
// every key is at least four bytes long, so each position of the text is
// looked up by its next four bytes, first in a 64 Kibit filter (almost every
// position of an ordinary line stops there), then in a map to the forms whose
// key starts with those bytes.
type keyIndex struct {
	filter   [1 << 16 / 64]uint64
	byPrefix map[uint32][]int // form indexes by the first four bytes of their key
}

var index = func() *keyIndex {
	ix := &keyIndex{byPrefix: map[uint32][]int{}}
	for i, f := range forms {
		if len(f.key) < 4 {
			panic(fmt.Sprintf("locale: key %q of %q is shorter than four bytes", f.key, f.tmpl))
		}
		p := prefix4(f.key, 0)
		h := hash16(p)
		ix.filter[h>>6] |= 1 << (h & 63)
		ix.byPrefix[p] = append(ix.byPrefix[p], i)
	}
	return ix
}()

func prefix4(s string, i int) uint32 {
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

func hash16(p uint32) uint32 { return (p * 2654435761) >> 16 }

// match finds the form text is written in. The pre-filters are cheap: every
// message holds a digit or names its statement, and holds its form's key.
func match(s string) (matched, bool) {
	if !maybe(s) {
		return matched{}, false
	}
	var tried [maxForms / 64]uint64
	for i := 0; i+4 <= len(s); i++ {
		p := prefix4(s, i)
		h := hash16(p)
		if index.filter[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		for _, k := range index.byPrefix[p] {
			if tried[k>>6]&(1<<(k&63)) != 0 {
				continue
			}
			f := forms[k]
			if !strings.HasPrefix(s[i:], f.key) {
				continue
			}
			tried[k>>6] |= 1 << (k & 63)
			if m, ok := f.match(s); ok {
				return m, true
			}
		}
	}
	return matched{}, false
}

// match applies the form's expression and collects its slots.
func (f *form) match(s string) (matched, bool) {
	g := f.re.FindStringSubmatch(s)
	if g == nil {
		return matched{}, false
	}
	vals := make(map[string]string, len(f.names))
	for i, name := range f.names {
		v := g[i+1]
		if numeric[name] {
			v = normNumber(v)
		}
		vals[name] = v
	}
	if f.msg == 3014 || f.msg == 3013 {
		vals["stmt"] = strings.Join(strings.Fields(vals["stmt"]), " ")
	}
	return matched{form: f, vals: vals}, true
}

// maybe is the first, cheapest test: a text with no digit (ASCII or
// full-width) that names no RESTORE or BACKUP statement is none of the
// messages.
func maybe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if '0' <= c && c <= '9' {
			return true
		}
		// Full-width digits are EF BC 90..99 in UTF-8.
		if c == 0xEF && i+2 < len(s) && s[i+1] == 0xBC && s[i+2] >= 0x90 && s[i+2] <= 0x99 {
			return true
		}
	}
	return strings.Contains(s, "RESTORE") || strings.Contains(s, "BACKUP")
}
