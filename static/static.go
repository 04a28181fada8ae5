// Package static embeds the dashboard's stylesheets and images, so the binary
// serves them without files on disk and the CSP can stay at 'self'.
package static

import "embed"

// FS holds style.css (the dashboard), report.css (the printable evidence
// report, also inlined into saved report files), favicon.svg and copy.js
// (the plan page's copy button).
//
//go:embed style.css report.css favicon.svg copy.js
var FS embed.FS
