// Package view holds the dashboard's templ components and the view models
// they render. Components do no I/O: the web package loads and shapes the
// data, a component only lays it out.
package view

import "net/url"

// Page is what every dashboard page shares.
type Page struct {
	Title string
	// Nav is the key of the current navigation entry (see NavItems).
	Nav string
	// Path is the current path and query, so the theme links come back here.
	Path string
	// Theme is "", "light" or "dark"; "" follows the browser's preference.
	Theme string
	// CSRF is the token every form posts back.
	CSRF string
	// TokenRequired says that writes need the write token (the server
	// listens beyond loopback), so forms show a token field.
	TokenRequired bool
	// Version is the restorewatch version for the footer.
	Version string
	// CSS is the stylesheet URL, versioned by its content hash.
	CSS string
}

// NavItem is one entry of the navigation.
type NavItem struct{ Key, Label, Href string }

// NavItems is the navigation, in order; every page shows it.
var NavItems = []NavItem{
	{"overview", "Overview", "/"},
	{"restores", "Restores", "/restores"},
	{"instances", "Instances", "/instances"},
	{"regressions", "Regressions", "/regressions"},
	{"builds", "Builds", "/builds"},
	{"compare", "Compare", "/compare"},
	{"live", "Live", "/live"},
	{"collector", "Collector", "/collector"},
	{"alerts", "Alerts", "/alerts"},
	{"import", "Import", "/import"},
}

// ThemeURL is the link that sets the theme cookie and returns to back; it
// works without JavaScript.
func ThemeURL(set, back string) string {
	return "/theme?" + url.Values{"set": {set}, "back": {back}}.Encode()
}

func ariaCurrent(ok bool) string {
	if ok {
		return "page"
	}
	return "false"
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// humanize turns a stored code ("not_enough_data") into words.
func humanize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '_' {
			b[i] = ' '
		}
	}
	return string(b)
}

// Paging is the state of a paged list.
type Paging struct {
	Text       string // "Restores 101–200 of 12,345"
	Prev, Next string // links; "" when there is none
}
