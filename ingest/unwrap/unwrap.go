// Package unwrap takes engine text out of the shapes DBAs paste it in: a
// web page (<pre>, lines joined by <br>, HTML entities), Markdown (code
// fences, > quote markers), container logs (docker compose's "service  | "
// prefix, the RFC 3339 stamps of kubectl logs --timestamps and docker logs
// -t), PowerShell's "VERBOSE: " prefix and indentation. Kind detection and
// every parser strip with the same Stripper, so a file is read as it was
// detected, and the import summary names what was removed.
package unwrap

import (
	"html"
	"regexp"
	"strings"
)

// The wrappers a Stripper removes, as the import summary names them.
const (
	HTML     = "HTML (<pre>, <br>, entities)"
	Fence    = "Markdown code fences"
	Quote    = "Markdown quote markers (>)"
	Compose  = "docker compose service prefix (name  | )"
	Stamps   = "container log timestamps (kubectl logs --timestamps, docker logs -t)"
	Verbose  = "PowerShell VERBOSE: prefix"
	Indent   = "indentation"
	SQLCmdM1 = "sqlcmd -m-1 message headers (Msg N, Level 0, ..., Server S, Line N)"
	Impacket = "impacket mssqlclient prefixes (INFO(S): Line N:, ERROR(S): Line N:, SQL> prompt)"
	Command  = "numbered Command N: labels"
)

var (
	// Only tags that carry text on a web page or in a Markdown file are
	// removed, so that a placeholder such as <database> in a KB article's
	// quote stays visible in a reject.
	reTag    = regexp.MustCompile(`(?i)</?(?:pre|br|code|p|div|span|em|strong|b|i|u|tt|samp|kbd|blockquote|li|ul|ol|font|a|td|tr|th|table|tbody|thead|hr|h[1-6]|sup|sub|small|big|mark|del|ins)\b[^<>]*>`)
	reBreak  = regexp.MustCompile(`(?i)<br\s*/?>`)
	reEntity = regexp.MustCompile(`&(?:lt|gt|amp|quot|apos|nbsp|#\d{1,6}|#x[0-9a-fA-F]{1,5});`)
	reFence  = regexp.MustCompile("^\\s*(?:```|~~~)")
	reQuote  = regexp.MustCompile(`^\s*(?:>\s?)+`)
	// docker compose pads service names to one width and writes " | "; v1
	// names end in _1, v2 in -1, container_name as given.
	reCompose = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9_.-]*)\s+\| ?`)
	// kubectl logs --timestamps and docker logs -t: RFC 3339 with a zone,
	// then one space. An error log's own stamp has no zone.
	reStamp   = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d) `)
	reVerbose = regexp.MustCompile(`^VERBOSE: `)
	// impacket's mssqlclient prints each TDS info or error message as
	// "INFO(SERVER): Line 1: text" or "ERROR(SERVER): Line 1: text", behind
	// its logger's "[*] " or "[-] " when it logs them, and echoes what was
	// typed after its prompt "SQL (user  dbo@master)> ".
	reImpacket = regexp.MustCompile(`^(?:\[[*!+-]\] )?(?:INFO|ERROR)\([^()]*\): Line \d+: ?`)
	rePrompt   = regexp.MustCompile(`^SQL(?: \([^()]*\))?> ?`)
	// Clients that run a script statement by statement number each one:
	// "Command 2: RESTORE LOG ...".
	reCommand = regexp.MustCompile(`^Command \d+: ?`)
	// sqlcmd -m-1 prints a header above every message, informational ones
	// included, and names the server: "Msg 3014, Level 0, State 1, Server
	// PETER-PC\SAHSU, Line 1".
	reServer = regexp.MustCompile(`^Msg \d+, Level \d+, State \d+, Server (.+?), (?:Procedure .+?, )?Line \d+\s*$`)
	// An error-log stamp at the start of a line, after indentation.
	reLogStamp = regexp.MustCompile(`^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d`)
)

// Stripper removes wrappers line by line and remembers which it removed.
// It holds the state a wrapper spans (inside a code fence or not). The zero
// value is ready to use.
type Stripper struct {
	removed []string
	seen    map[string]bool
	server  string
}

// Line returns the text lines that one physical line carries: none for a
// fence line, several for HTML lines joined by <br>, usually just the line
// without its wrapper. A line that wears none is returned as it is.
func (s *Stripper) Line(line string) []string {
	if plain(line) {
		return []string{line}
	}
	if reFence.MatchString(line) {
		s.note(Fence)
		return nil
	}
	if strings.IndexByte(line, '<') >= 0 || strings.IndexByte(line, '&') >= 0 {
		if reTag.MatchString(line) || reEntity.MatchString(line) {
			s.note(HTML)
			var out []string
			for _, part := range reBreak.Split(line, -1) {
				part = reTag.ReplaceAllString(part, "")
				part = strings.ReplaceAll(html.UnescapeString(part), "\u00a0", " ")
				out = append(out, s.prefixes(part))
			}
			return out
		}
	}
	return []string{s.prefixes(line)}
}

// prefixes removes the wrappers that sit at the start of a line, outermost
// first: a quote marker, a compose prefix, a container stamp, VERBOSE:.
func (s *Stripper) prefixes(line string) string {
	for range 6 {
		before := line
		if loc := reQuote.FindStringIndex(line); loc != nil {
			s.note(Quote)
			line = line[loc[1]:]
		}
		if loc := reCompose.FindStringIndex(line); loc != nil {
			s.note(Compose)
			line = line[loc[1]:]
		}
		if loc := reStamp.FindStringIndex(line); loc != nil {
			s.note(Stamps)
			line = line[loc[1]:]
		}
		if loc := reVerbose.FindStringIndex(line); loc != nil {
			s.note(Verbose)
			line = line[loc[1]:]
		}
		if loc := reImpacket.FindStringIndex(line); loc != nil {
			s.note(Impacket)
			line = line[loc[1]:]
		}
		if loc := rePrompt.FindStringIndex(line); loc != nil {
			s.note(Impacket)
			line = line[loc[1]:]
		}
		if loc := reCommand.FindStringIndex(line); loc != nil {
			s.note(Command)
			line = line[loc[1]:]
		}
		if line == before {
			break
		}
	}
	if t := strings.TrimLeft(line, " \t"); len(t) < len(line) && reLogStamp.MatchString(t) {
		s.note(Indent)
		line = t
	}
	if g := reServer.FindStringSubmatch(strings.TrimSpace(line)); g != nil {
		s.note(SQLCmdM1)
		if s.server == "" {
			s.server = strings.TrimSpace(g[1])
		}
	}
	return line
}

// plain reports whether a line can carry no wrapper: the fast path for an
// error log's own lines, which start with their stamp.
func plain(line string) bool {
	return len(line) > 10 && line[10] == ' ' && reLogStamp.MatchString(line) ||
		line == ""
}

func (s *Stripper) note(w string) {
	if s.seen[w] {
		return
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	s.seen[w] = true
	s.removed = append(s.removed, w)
}

// Removed lists the wrappers removed so far, in the order first met.
func (s *Stripper) Removed() []string { return append([]string(nil), s.removed...) }

// Server is the server the first sqlcmd -m-1 header named, "" when none did.
func (s *Stripper) Server() string { return s.server }

// Name undoes the quoting a client or a copy added around a database name:
// [na]]me] and "na""me" (T-SQL's quoting, as an echoed statement or a
// client prints them), 'na”me' (a string literal), and the stray leading
// quote of a name printed inside doubled quotes (”name' in Processed ...
// for database ”name', file ...). The engine itself prints names raw.
func Name(s string) string {
	n := len(s)
	switch {
	case n >= 2 && s[0] == '[' && s[n-1] == ']':
		return strings.ReplaceAll(s[1:n-1], "]]", "]")
	case n >= 2 && s[0] == '"' && s[n-1] == '"':
		return strings.ReplaceAll(s[1:n-1], `""`, `"`)
	case n >= 2 && s[0] == '\'' && s[n-1] == '\'':
		return strings.ReplaceAll(s[1:n-1], "''", "'")
	case n >= 2 && s[0] == '\'' && strings.Count(s, "'")%2 == 1:
		return strings.ReplaceAll(s[1:], "''", "'")
	}
	return s
}
