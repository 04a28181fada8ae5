package chart

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

const svgNS = "http://www.w3.org/2000/svg"

// Font metrics used for layout. Text is never measured by a browser here, so
// widths are estimated from the rune count with an average glyph width for the
// sans-serif fonts the dashboard uses (0.6em errs on the wide side, so
// labels may have extra room but do not overlap).
const (
	fontSize  = 12.0
	charWidth = fontSize * 0.6
	lineH     = 14.0
)

// Frame holds what every chart shares: its accessible name and description,
// its element id prefix and its viewBox size.
type Frame struct {
	// Title is the chart's accessible name (<title>), also shown by browsers
	// as a tooltip on the chart background.
	Title string
	// Desc is the longer accessible description (<desc>). When empty a
	// summary of the data is generated, so screen-reader users get the gist.
	Desc string
	// ID prefixes the ids of <title> and <desc>. It must be unique on the
	// page; when empty an id is derived from a hash of the rendered content,
	// which keeps output deterministic and distinct for distinct charts.
	ID string
	// Width and Height are the viewBox size in user units (roughly CSS px at
	// 100% zoom). Zero means the chart type's default. The SVG itself always
	// scales to the width of its container.
	Width, Height float64
}

// builder accumulates SVG markup. Every attribute value and every text node
// passes through xml escaping here, so chart code cannot write data raw.
type builder struct{ bytes.Buffer }

// attrs writes name="value" pairs; names are constants from this package,
// values are always escaped.
func (b *builder) attrs(kv []string) {
	for i := 0; i+1 < len(kv); i += 2 {
		b.WriteByte(' ')
		b.WriteString(kv[i])
		b.WriteString(`="`)
		b.text(kv[i+1])
		b.WriteByte('"')
	}
}

// open writes a start tag.
func (b *builder) open(tag string, kv ...string) {
	b.WriteByte('<')
	b.WriteString(tag)
	b.attrs(kv)
	b.WriteByte('>')
}

// close writes an end tag.
func (b *builder) close(tag string) {
	b.WriteString("</")
	b.WriteString(tag)
	b.WriteByte('>')
}

// leaf writes an empty element.
func (b *builder) leaf(tag string, kv ...string) {
	b.WriteByte('<')
	b.WriteString(tag)
	b.attrs(kv)
	b.WriteString("/>")
}

// elem writes an element with escaped text content.
func (b *builder) elem(tag, text string, kv ...string) {
	b.open(tag, kv...)
	b.text(text)
	b.close(tag)
}

// text writes escaped character data. xml.EscapeText also replaces invalid
// UTF-8 and characters XML forbids (e.g. U+0001) with U+FFFD, which keeps the
// document well-formed whatever the database returns.
func (b *builder) text(s string) {
	_ = xml.EscapeText(b, []byte(s)) // writes to a bytes.Buffer cannot fail
}

// title writes a native tooltip.
func (b *builder) title(s string) {
	if s != "" {
		b.elem("title", s)
	}
}

// num formats a coordinate compactly with one decimal ("12", "12.5"). Values
// are clamped so a wild input cannot produce megabytes of digits.
func num(f float64) string {
	if math.IsNaN(f) {
		return "0"
	}
	f = math.Max(-1e6, math.Min(1e6, f))
	s := strconv.FormatFloat(f, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	if s == "-0" {
		s = "0"
	}
	return s
}

// finite reports whether v is a usable number.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// SafeURL returns href trimmed and true when it is safe to use as a link:
// a relative URL, or an absolute http or https URL. Anything else (including
// javascript:, data: and vbscript:, in any letter case) is refused because
// link targets come from data. Control characters are refused too, since
// browsers drop them and "java\tscript:" would otherwise slip through.
func SafeURL(href string) (string, bool) {
	s := strings.TrimSpace(href)
	if s == "" {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return "", false
		}
	}
	// A scheme is whatever precedes the first ':' if no '/', '?' or '#'
	// comes before it (RFC 3986); otherwise the URL is relative.
	if i := strings.IndexAny(s, ":/?#"); i >= 0 && s[i] == ':' {
		switch strings.ToLower(s[:i]) {
		case "http", "https":
		default:
			return "", false
		}
	}
	return s, true
}

// linkOpen starts an <a> for href when it is safe and reports whether it
// did; the caller closes it with linkClose(ok).
func (b *builder) linkOpen(href string) bool {
	u, ok := SafeURL(href)
	if ok {
		b.open("a", "href", u)
	}
	return ok
}

func (b *builder) linkClose(ok bool) {
	if ok {
		b.close("a")
	}
}

// truncate shortens s to at most max runes, ending with an ellipsis, so long
// database names do not overrun neighbouring labels. The full text stays
// available in a tooltip.
func truncate(s string, max int) string {
	if max < 1 {
		max = 1
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}

// textWidth estimates the rendered width of s at the default font size.
func textWidth(s string) float64 { return float64(utf8.RuneCountInString(s)) * charWidth }

// cleanID keeps only characters that are safe in an id and in an
// aria-labelledby id list (no spaces), so a caller's ID cannot break markup.
func cleanID(s string) string {
	var sb strings.Builder
	for _, r := range s {
		if r < 0x80 && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// docOpts describes the root element of one chart kind.
type docOpts struct {
	kind          string  // CSS class, e.g. "rw-timescatter"
	defTitle      string  // accessible name used when Frame.Title is empty
	defW, defH    float64 // default viewBox size
	width, height string  // width/height attributes; "" omits height
}

// drawFunc draws the chart body into b for a viewBox of w×h. It returns the
// final height (charts such as Bars grow with their rows), a generated
// description, and false when there is nothing to draw.
type drawFunc func(b *builder, w, h float64) (height float64, desc string, ok bool)

// render is the shared Render implementation: it draws the body first so the
// id can be derived from the content and nothing is written to w on error.
func render(ctx context.Context, w io.Writer, f Frame, o docOpts, draw drawFunc) error {
	if ctx != nil {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	_, err := w.Write(renderBytes(f, o, draw))
	return err
}

func renderBytes(f Frame, o docOpts, draw drawFunc) []byte {
	W, H := f.Width, f.Height
	if !finite(W) || W < 40 || W > 1e5 {
		W = o.defW
	}
	if !finite(H) || H < 16 || H > 1e5 {
		H = o.defH // 0 for charts that size themselves (Bars)
	}
	var body builder
	h, desc, ok := draw(&body, W, H)
	if !ok {
		body.Reset()
		if H == 0 {
			H = 120
		}
		h, desc = H, "No data."
		drawEmpty(&body, W, H)
	}
	if f.Desc != "" {
		desc = f.Desc
	}
	title := f.Title
	if title == "" {
		title = o.defTitle
	}
	id := cleanID(f.ID)
	if id == "" {
		hs := fnv.New64a()
		fmt.Fprintf(hs, "%s\x00%s\x00%s\x00", o.kind, title, desc)
		hs.Write(body.Bytes())
		id = fmt.Sprintf("rw%x", hs.Sum64())
	}
	var out builder
	kv := []string{"xmlns", svgNS, "class", "rw-chart " + o.kind,
		"viewBox", "0 0 " + num(W) + " " + num(h), "width", o.width}
	if o.height != "" {
		kv = append(kv, "height", o.height)
	}
	kv = append(kv, "role", "img", "aria-labelledby", id+"-title", "aria-describedby", id+"-desc",
		"font-family", "system-ui, sans-serif", "font-size", num(fontSize))
	out.open("svg", kv...)
	out.elem("title", title, "id", id+"-title")
	out.elem("desc", desc, "id", id+"-desc")
	out.Write(body.Bytes())
	out.close("svg")
	return out.Bytes()
}

// drawEmpty draws the "No data" placeholder so an empty result is visibly
// empty rather than a blank gap or a broken axis.
func drawEmpty(b *builder, w, h float64) {
	fs := math.Min(fontSize*1.2, h*0.5)
	b.leaf("rect", "class", "rw-empty-frame", "x", "0.5", "y", "0.5", "width", num(w-1), "height", num(h-1),
		"fill", "none", "stroke", "currentColor", "stroke-opacity", "0.3", "stroke-dasharray", "4 4")
	b.elem("text", "No data", "class", "rw-empty", "x", num(w/2), "y", num(h/2+fs*0.35),
		"text-anchor", "middle", "font-size", num(fs), "fill", "currentColor")
}
