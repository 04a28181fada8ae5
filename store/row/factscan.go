package row

import (
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// factScanner reads the scalar values and string lists of one JSON array in
// order. After the array's last value every read yields NULL; the first
// malformed value stops it with err set.
type factScanner struct {
	s   string
	i   int
	n   int // values read
	end bool
	err error
}

func (p *factScanner) fail(what string) {
	if p.err == nil {
		p.err = fmt.Errorf("facts: %s at byte %d", what, p.i)
	}
	p.end = true
}

func (p *factScanner) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\n' || p.s[p.i] == '\t' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *factScanner) begin() {
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != '[' {
		p.fail("not an array")
		return
	}
	p.i++
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.end = true
	}
}

// value positions the scanner on the next value and says whether there is
// one.
func (p *factScanner) value() bool {
	if p.end {
		return false
	}
	p.space()
	if p.n > 0 {
		if p.i >= len(p.s) {
			p.fail("unterminated array")
			return false
		}
		switch p.s[p.i] {
		case ']':
			p.end = true
			return false
		case ',':
			p.i++
			p.space()
		default:
			p.fail("expected , or ]")
			return false
		}
	}
	p.n++
	if p.i >= len(p.s) {
		p.fail("unterminated array")
		return false
	}
	return true
}

func (p *factScanner) null() bool {
	if strings.HasPrefix(p.s[p.i:], "null") {
		p.i += 4
		return true
	}
	return false
}

func (p *factScanner) str() string {
	if !p.value() || p.null() {
		return ""
	}
	return p.quoted()
}

// quoted reads the JSON string at the cursor.
func (p *factScanner) quoted() string {
	if p.s[p.i] != '"' {
		p.fail("expected a string")
		return ""
	}
	j := p.i + 1
	for j < len(p.s) && p.s[j] != '"' && p.s[j] != '\\' {
		j++
	}
	if j < len(p.s) && p.s[j] == '"' {
		v := p.s[p.i+1 : j]
		p.i = j + 1
		return v
	}
	// Escapes (every Windows path has them): unescaped here, as JSON says.
	out := make([]byte, 0, j-p.i+16)
	out = append(out, p.s[p.i+1:j]...)
	for j < len(p.s) {
		c := p.s[j]
		switch {
		case c == '"':
			p.i = j + 1
			return string(out)
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(p.s) {
			break
		}
		e := p.s[j+1]
		j += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := p.hex4(j)
			if !ok {
				p.fail("bad \\u escape")
				return ""
			}
			j += 4
			if utf16.IsSurrogate(r) {
				if r2, ok := p.hex4(j + 2); ok && strings.HasPrefix(p.s[j:], `\u`) {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						r = dec
						j += 6
					} else {
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			p.fail("bad escape")
			return ""
		}
	}
	p.fail("unterminated string")
	return ""
}

// hex4 reads the four hex digits at s[i:].
func (p *factScanner) hex4(i int) (rune, bool) {
	if i+4 > len(p.s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(p.s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func (p *factScanner) int() sql.NullInt64 {
	if !p.value() || p.null() {
		return sql.NullInt64{}
	}
	j := p.i
	if j < len(p.s) && p.s[j] == '-' {
		j++
	}
	for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
		j++
	}
	v, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
	if err != nil {
		p.fail("expected an integer")
		return sql.NullInt64{}
	}
	p.i = j
	return sql.NullInt64{Int64: v, Valid: true}
}

func (p *factScanner) boolean() sql.NullBool {
	if !p.value() || p.null() {
		return sql.NullBool{}
	}
	for _, w := range [...]struct {
		text string
		v    bool
	}{{"0", false}, {"1", true}, {"false", false}, {"true", true}} {
		if strings.HasPrefix(p.s[p.i:], w.text) {
			p.i += len(w.text)
			return sql.NullBool{Bool: w.v, Valid: true}
		}
	}
	p.fail("expected 0 or 1")
	return sql.NullBool{}
}

func (p *factScanner) strs() []string {
	if !p.value() || p.null() {
		return nil
	}
	if p.s[p.i] != '[' {
		p.fail("expected a list")
		return nil
	}
	p.i++
	var out []string
	for {
		p.space()
		if p.i >= len(p.s) {
			p.fail("unterminated list")
			return nil
		}
		if p.s[p.i] == ']' {
			p.i++
			return out
		}
		if len(out) > 0 {
			if p.s[p.i] != ',' {
				p.fail("expected , or ]")
				return nil
			}
			p.i++
			p.space()
			if p.i >= len(p.s) {
				p.fail("unterminated list")
				return nil
			}
		}
		v := p.quoted()
		if p.err != nil {
			return nil
		}
		out = append(out, v)
	}
}

// DecodeStrings reads a JSON list of strings, such as log_restore.devices,
// as encoding/json would, without its reflection; malformed text reads as
// no strings.
func DecodeStrings(s string) []string {
	p := factScanner{s: s}
	out := p.strs()
	if p.err != nil {
		return nil
	}
	return out
}
