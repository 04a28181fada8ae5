package mssqltest

import (
	"fmt"
	"strings"
)

// This file reads just enough T-SQL to say which objects and columns a
// batch can reach, and under which existence probes: the basis of the
// version checks (Schema.Check) and of their tests. It understands the
// forms restorewatch's own queries use and rejects, with an error, any form
// it would otherwise misjudge.
//
//   - Column references are alias.column, the alias bound by FROM, JOIN or
//     APPLY to a schema-qualified object (msdb.dbo.backupset AS bs,
//     sys.dm_os_volume_stats(...) AS vs). Unqualified column names are not
//     seen: the queries qualify every column of a system object.
//   - A guard is IF followed by probes joined by AND, each
//     COL_LENGTH(N'object', N'column') IS NOT NULL or
//     OBJECT_ID(N'object') IS NOT NULL. Its body is one statement ending at
//     ";", its ELSE one statement (possibly another IF).
//   - Dynamic SQL is EXEC (N'...') or EXEC sys.sp_executesql N'...'; the
//     string is read as a batch of its own.

// Probe is one existence test: COL_LENGTH(Object, Column) IS NOT NULL, or
// OBJECT_ID(Object) IS NOT NULL when Column is "".
type Probe struct{ Object, Column string }

// Cond is one guard on the way to a reference: its probes all hold, or, for
// the ELSE branch (Else), not all of them hold.
type Cond struct {
	Probes []Probe
	Else   bool
}

// Ref is an object (Column "") or a column a batch names.
type Ref struct {
	Object, Column string
	Guards         []Cond // innermost last
	// Dynamic is set for a name inside dynamic SQL: SQL Server compiles it
	// only when the EXEC runs. A name outside it is compiled with the whole
	// batch, whatever IF it sits under.
	Dynamic bool
	Proc    bool // an EXEC of a stored or extended procedure
}

func (r Ref) String() string {
	if r.Column == "" {
		return r.Object
	}
	return r.Object + "." + r.Column
}

// Covered reports whether a probe on the way to r tests r itself:
// COL_LENGTH for a column, OBJECT_ID for an object.
func (r Ref) Covered() bool {
	for _, c := range r.Guards {
		if c.Else {
			continue
		}
		for _, p := range c.Probes {
			if p.Object == r.Object && p.Column == r.Column {
				return true
			}
		}
	}
	return false
}

// Analyze lists the objects and columns a batch names.
func Analyze(sql string) ([]Ref, error) {
	toks, err := lex(sql)
	if err != nil {
		return nil, err
	}
	var a analyzer
	if err := a.batch(toks, nil, false); err != nil {
		return nil, err
	}
	return a.refs, nil
}

type tokKind int

const (
	tIdent tokKind = iota
	tString
	tNumber
	tVar
	tPunct
)

type token struct {
	kind tokKind
	text string // an identifier without brackets, a string's unescaped content
	pos  int
}

func (t token) is(kw string) bool   { return t.kind == tIdent && strings.EqualFold(t.text, kw) }
func (t token) punct(p string) bool { return t.kind == tPunct && t.text == p }

// lex splits T-SQL into tokens, dropping comments.
func lex(s string) ([]token, error) {
	var out []token
	isWord := func(c byte) bool {
		return c == '_' || c == '#' || c == '$' || c == '@' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case strings.HasPrefix(s[i:], "--"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			depth, j := 0, i
			for j < len(s) {
				if strings.HasPrefix(s[j:], "/*") {
					depth, j = depth+1, j+2
				} else if strings.HasPrefix(s[j:], "*/") {
					depth, j = depth-1, j+2
					if depth == 0 {
						break
					}
				} else {
					j++
				}
			}
			if depth != 0 {
				return nil, fmt.Errorf("offset %d: unterminated comment", i)
			}
			i = j
		case c == '\'' || (c == 'N' || c == 'n') && i+1 < len(s) && s[i+1] == '\'':
			start := i
			if c != '\'' {
				i++
			}
			var b strings.Builder
			for i++; ; i++ {
				if i >= len(s) {
					return nil, fmt.Errorf("offset %d: unterminated string", start)
				}
				if s[i] == '\'' {
					if i+1 < len(s) && s[i+1] == '\'' {
						b.WriteByte('\'')
						i++
						continue
					}
					i++
					break
				}
				b.WriteByte(s[i])
			}
			out = append(out, token{tString, b.String(), start})
		case c == '[' || c == '"':
			end := byte(']')
			if c == '"' {
				end = '"'
			}
			start := i
			var b strings.Builder
			for i++; ; i++ {
				if i >= len(s) {
					return nil, fmt.Errorf("offset %d: unterminated identifier", start)
				}
				if s[i] == end {
					if i+1 < len(s) && s[i+1] == end {
						b.WriteByte(end)
						i++
						continue
					}
					i++
					break
				}
				b.WriteByte(s[i])
			}
			out = append(out, token{tIdent, b.String(), start})
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				j++
			}
			out = append(out, token{tNumber, s[i:j], i})
			i = j
		case isWord(c):
			j := i
			for j < len(s) && isWord(s[j]) {
				j++
			}
			kind := tIdent
			if c == '@' {
				kind = tVar
			}
			out = append(out, token{kind, s[i:j], i})
			i = j
		default:
			out = append(out, token{tPunct, s[i : i+1], i})
			i++
		}
	}
	return out, nil
}

type analyzer struct{ refs []Ref }

// batch reads one batch: the top level of a query, or a dynamic string.
func (a *analyzer) batch(toks []token, guards []Cond, dynamic bool) error {
	aliases, err := bindAliases(toks)
	if err != nil {
		return err
	}
	for i := 0; i < len(toks); {
		next, err := a.statement(toks, i, aliases, guards, dynamic)
		if err != nil {
			return err
		}
		i = next
	}
	return nil
}

// statement reads one statement from toks[i] and returns where the next
// one starts.
func (a *analyzer) statement(toks []token, i int, aliases map[string]string, guards []Cond, dynamic bool) (int, error) {
	if toks[i].is("IF") {
		cond, j, err := probes(toks, i+1)
		if err != nil {
			return 0, err
		}
		if j >= len(toks) || toks[j].is("BEGIN") {
			return 0, fmt.Errorf("offset %d: an IF body must be one statement ending in ';'", toks[i].pos)
		}
		inner := append(guards[:len(guards):len(guards)], Cond{Probes: cond})
		j, err = a.statement(toks, j, aliases, inner, dynamic)
		if err != nil {
			return 0, err
		}
		if j < len(toks) && toks[j].is("ELSE") {
			other := append(guards[:len(guards):len(guards)], Cond{Probes: cond, Else: true})
			if j+1 >= len(toks) {
				return 0, fmt.Errorf("offset %d: ELSE without a statement", toks[j].pos)
			}
			return a.statement(toks, j+1, aliases, other, dynamic)
		}
		return j, nil
	}
	// A plain statement runs to ";" or to the next IF or ELSE at its own
	// level.
	// CASE ... ELSE ... END is an expression, not a branch.
	end, depth, cases := i, 0, 0
	for ; end < len(toks); end++ {
		t := toks[end]
		switch {
		case t.punct("("):
			depth++
		case t.punct(")"):
			depth--
		case t.is("CASE"):
			cases++
		case t.is("END") && cases > 0:
			cases--
		}
		if depth == 0 && cases == 0 && end > i && (t.punct(";") || t.is("IF") || t.is("ELSE")) {
			break
		}
	}
	if err := a.names(toks[i:end], aliases, guards, dynamic); err != nil {
		return 0, err
	}
	if end < len(toks) && toks[end].punct(";") {
		end++
	}
	return end, nil
}

// probes reads "COL_LENGTH(...) IS NOT NULL [AND ...]" from toks[i].
func probes(toks []token, i int) ([]Probe, int, error) {
	var out []Probe
	for {
		if i >= len(toks) {
			return nil, 0, fmt.Errorf("IF at the end of the batch")
		}
		var p Probe
		switch {
		case toks[i].is("COL_LENGTH") && i+5 < len(toks) && toks[i+1].punct("(") && toks[i+2].kind == tString &&
			toks[i+3].punct(",") && toks[i+4].kind == tString && toks[i+5].punct(")"):
			p = Probe{objectName(toks[i+2].text), strings.ToLower(toks[i+4].text)}
			i += 6
		case toks[i].is("OBJECT_ID") && i+3 < len(toks) && toks[i+1].punct("(") && toks[i+2].kind == tString && toks[i+3].punct(")"):
			p = Probe{Object: objectName(toks[i+2].text)}
			i += 4
		default:
			return nil, 0, fmt.Errorf("offset %d: an IF condition must be COL_LENGTH(N'object', N'column') or OBJECT_ID(N'object') IS NOT NULL, joined by AND", toks[i].pos)
		}
		if !(i+2 < len(toks) && toks[i].is("IS") && toks[i+1].is("NOT") && toks[i+2].is("NULL")) {
			return nil, 0, fmt.Errorf("offset %d: a probe must be followed by IS NOT NULL", toks[i-1].pos)
		}
		out = append(out, p)
		i += 3
		if i < len(toks) && toks[i].is("AND") {
			i++
			continue
		}
		return out, i, nil
	}
}

// objectName normalises a multi-part name: lower case, msdb..x as
// msdb.dbo.x.
func objectName(s string) string {
	s = strings.ToLower(strings.NewReplacer("[", "", "]", "").Replace(strings.TrimSpace(s)))
	return strings.ReplaceAll(s, "..", ".dbo.")
}

// dotted reads a multi-part name from toks[i] and returns it with the index
// after it.
func dotted(toks []token, i int) (string, int) {
	var parts []string
	for i < len(toks) && toks[i].kind == tIdent {
		parts = append(parts, toks[i].text)
		i++
		for i+1 < len(toks) && toks[i].punct(".") && toks[i+1].punct(".") { // msdb..table
			parts = append(parts, "dbo")
			i++
		}
		if i+1 < len(toks) && toks[i].punct(".") && toks[i+1].kind == tIdent {
			i++
			continue
		}
		break
	}
	return objectName(strings.Join(parts, ".")), i
}

// sourceKeyword reports whether toks[i] introduces a row source.
func sourceKeyword(t token) bool { return t.is("FROM") || t.is("JOIN") || t.is("APPLY") }

// notAlias are words that can follow a row source and are not its alias.
var notAlias = map[string]bool{"where": true, "on": true, "join": true, "left": true, "right": true, "inner": true,
	"outer": true, "cross": true, "full": true, "order": true, "group": true, "having": true, "union": true,
	"with": true, "option": true, "for": true, "select": true, "else": true, "if": true}

// bindAliases maps every alias bound by FROM, JOIN or APPLY in toks to its
// object; an alias of a derived table, a table variable or a common table
// expression maps to "". An alias bound twice to different sources is an
// error: the checks could not tell which one a column belongs to.
func bindAliases(toks []token) (map[string]string, error) {
	ctes := map[string]bool{}
	for i := 0; i+2 < len(toks); i++ {
		if (toks[i].is("WITH") || toks[i].punct(",")) && toks[i+1].kind == tIdent && toks[i+2].is("AS") &&
			i+3 < len(toks) && toks[i+3].punct("(") {
			ctes[strings.ToLower(toks[i+1].text)] = true
		}
	}
	out := map[string]string{}
	bind := func(alias, obj string, pos int) error {
		alias = strings.ToLower(alias)
		if prev, ok := out[alias]; ok && prev != obj {
			return fmt.Errorf("offset %d: alias %s names both %q and %q", pos, alias, prev, obj)
		}
		out[alias] = obj
		return nil
	}
	for i := 0; i < len(toks); i++ {
		if !sourceKeyword(toks[i]) || i+1 >= len(toks) {
			continue
		}
		j := i + 1
		obj := ""
		switch t := toks[j]; {
		case t.punct("("):
			if j = skipParens(toks, j); j < 0 {
				return nil, fmt.Errorf("offset %d: unclosed parenthesis", t.pos)
			}
		case t.kind == tVar:
			j++
		case t.kind == tIdent:
			var name string
			name, j = dotted(toks, j)
			if strings.Contains(name, ".") {
				obj = name
			} else if !ctes[name] {
				return nil, fmt.Errorf("offset %d: unqualified object %s: name its schema (sys.x, msdb.dbo.x)", t.pos, name)
			}
			if j < len(toks) && toks[j].punct("(") {
				if j = skipParens(toks, j); j < 0 {
					return nil, fmt.Errorf("offset %d: unclosed parenthesis", t.pos)
				}
			}
		default:
			continue
		}
		if j < len(toks) && toks[j].is("AS") {
			j++
		}
		if j < len(toks) && toks[j].kind == tIdent && !notAlias[strings.ToLower(toks[j].text)] {
			if err := bind(toks[j].text, obj, toks[j].pos); err != nil {
				return nil, err
			}
		} else if obj != "" {
			// No alias: the object's own last part qualifies its columns.
			if err := bind(obj[strings.LastIndex(obj, ".")+1:], obj, toks[i].pos); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// skipParens returns the index after the parenthesis that closes toks[i],
// or -1 if none does.
func skipParens(toks []token, i int) int {
	depth := 0
	for ; i < len(toks); i++ {
		if toks[i].punct("(") {
			depth++
		} else if toks[i].punct(")") {
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// names records the objects and columns one plain statement names, and
// reads its dynamic SQL.
func (a *analyzer) names(toks []token, aliases map[string]string, guards []Cond, dynamic bool) error {
	add := func(r Ref) {
		r.Guards, r.Dynamic = guards, dynamic
		a.refs = append(a.refs, r)
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case sourceKeyword(t) && i+1 < len(toks) && toks[i+1].kind == tIdent:
			name, j := dotted(toks, i+1)
			if strings.Contains(name, ".") {
				add(Ref{Object: name})
			}
			i = j - 1
		case t.is("EXEC") || t.is("EXECUTE"):
			j := i + 1
			if j < len(toks) && toks[j].punct("(") {
				// EXEC (N'...' [+ N'...']): the strings are one batch.
				end := skipParens(toks, j)
				if end < 0 {
					return fmt.Errorf("offset %d: unclosed parenthesis", toks[j].pos)
				}
				var b strings.Builder
				for _, s := range toks[j+1 : end-1] {
					switch {
					case s.kind == tString:
						b.WriteString(s.text)
					case s.punct("+"):
					default:
						return fmt.Errorf("offset %d: EXEC of anything but string literals cannot be checked", s.pos)
					}
				}
				if err := a.dynamicSQL(b.String(), guards); err != nil {
					return err
				}
				i = end - 1
				continue
			}
			if j < len(toks) && toks[j].kind == tIdent {
				name, k := dotted(toks, j)
				if !strings.Contains(name, ".") {
					return fmt.Errorf("offset %d: unqualified procedure %s", toks[j].pos, name)
				}
				add(Ref{Object: name, Proc: true})
				if strings.HasSuffix(name, ".sp_executesql") {
					if k >= len(toks) || toks[k].kind != tString {
						return fmt.Errorf("offset %d: sp_executesql of anything but a string literal cannot be checked", toks[j].pos)
					}
					if err := a.dynamicSQL(toks[k].text, guards); err != nil {
						return err
					}
				}
				i = k - 1
			}
		case t.kind == tIdent && i+2 < len(toks) && toks[i+1].punct(".") && toks[i+2].kind == tIdent &&
			(i == 0 || !toks[i-1].punct(".")):
			name, j := dotted(toks, i)
			i = j - 1
			if j < len(toks) && toks[j].punct("(") {
				continue // a method (.value) or a schema-qualified function
			}
			parts := strings.Split(name, ".")
			if len(parts) != 2 {
				continue
			}
			obj, ok := aliases[parts[0]]
			if !ok {
				return fmt.Errorf("offset %d: %s: %s is not an alias of this batch", t.pos, name, parts[0])
			}
			if obj != "" {
				add(Ref{Object: obj, Column: parts[1]})
			}
		}
	}
	return nil
}

func (a *analyzer) dynamicSQL(sql string, guards []Cond) error {
	toks, err := lex(sql)
	if err != nil {
		return fmt.Errorf("dynamic SQL: %w", err)
	}
	if err := a.batch(toks, guards, true); err != nil {
		return fmt.Errorf("dynamic SQL: %w", err)
	}
	return nil
}
