package row

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestJSONStringMatchesEncodingJSON: the restore rows' devices text, whose
// content hash earlier versions stored, is written as json.Marshal wrote it.
func TestJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, ss := range [][]string{nil, {}, {""}, {`\\nas\b & <c>.bak`, "a\"b\b\f\n\r\t\x01\x7f", "\u2028\u2029é\xff\xfe", "https://x/y?z=1&w=2"}} {
		want, _ := json.Marshal(append([]string{}, ss...))
		if got := StringsJSON(ss); got != string(want) {
			t.Errorf("StringsJSON(%q) = %s, json.Marshal %s", ss, got, want)
		}
	}
}

// FuzzFactString: the facts scanner reads any JSON string token as
// encoding/json does (invalid UTF-8, which no writer of facts produces, it
// passes through instead of replacing).
func FuzzFactString(f *testing.F) {
	for _, s := range []string{`"a"`, `"C:\\x\\y"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\u00e9\n\/"`, `"\ude00\ud83d x"`, `"a\"b"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		var want string
		werr := json.Unmarshal([]byte(tok), &want)
		if werr != nil || !strings.HasPrefix(tok, `"`) || !utf8.ValidString(tok) {
			return
		}
		p := factScanner{s: tok}
		got := p.quoted()
		if p.err != nil || got != want || p.i != len(strings.TrimRight(tok, " \t\r\n")) {
			t.Errorf("quoted(%q) = %q (err %v, at %d), encoding/json %q", tok, got, p.err, p.i, want)
		}
	})
}

// FuzzDecodeStrings: decodeStrings reads any JSON list of strings as
// encoding/json does (an empty list as none).
func FuzzDecodeStrings(f *testing.F) {
	for _, s := range []string{`[]`, `["a"]`, `["C:\\b\\x.bak", "\\\\share\\y.trn"]`, `null`, ` [ "a" , "b" ] `, `["\u00e9"]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var want []string
		if json.Unmarshal([]byte(text), &want) != nil || !utf8.ValidString(text) {
			return
		}
		if got := DecodeStrings(text); !slices.Equal(got, want) {
			t.Errorf("DecodeStrings(%q) = %q, encoding/json %q", text, got, want)
		}
	})
}
