package view

import (
	"crypto/sha256"
	"encoding/base64"

	"github.com/a-h/templ"
)

// Report is the frame of a printable evidence report: no navigation, light
// only, and either a link to the report stylesheet (served) or the
// stylesheet itself (a saved file that must stand alone).
type Report struct {
	Title     string
	CSSURL    string // served: the stylesheet's URL
	InlineCSS string // saved: the stylesheet text; wins over CSSURL
}

// Policy is the report's own Content-Security-Policy, carried in the page
// (a saved file has no response headers): no script, no plugin, no frame,
// no request anywhere except the stylesheet — served from this origin, or
// inline and allowed by its hash only — and data: images. Printing a report
// to PDF therefore runs nothing and fetches nothing, whatever a name from a
// server holds.
func (r Report) Policy() string {
	style := "'self'"
	img := "'self' data:"
	if r.InlineCSS != "" {
		sum := sha256.Sum256([]byte(inlineCSSText(r.InlineCSS)))
		style = "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		img = "data:"
	}
	return "default-src 'none'; script-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'; style-src " + style + "; img-src " + img
}

// inlineCSSText is the exact text of the inline <style> element, which the
// policy's hash covers.
func inlineCSSText(css string) string { return "\n" + css + "\n" }

// inlineStyle writes the report's own stylesheet into the page. The text
// is restorewatch's embedded CSS, never data, so it is trusted.
func inlineStyle(css string) templ.Component {
	return templ.Raw("<style>" + inlineCSSText(css) + "</style>")
}
