package view

import "github.com/a-h/templ"

// Report is the frame of a printable evidence report: no navigation, light
// only, and either a link to the report stylesheet (served) or the
// stylesheet itself (a saved file that must stand alone).
type Report struct {
	Title     string
	CSSURL    string // served: the stylesheet's URL
	InlineCSS string // saved: the stylesheet text; wins over CSSURL
}

// inlineStyle writes the report's own stylesheet into the page. The text
// is restorewatch's embedded CSS, never data, so it is trusted.
func inlineStyle(css string) templ.Component {
	return templ.Raw("<style>\n" + css + "\n</style>")
}
