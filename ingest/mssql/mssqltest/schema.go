package mssqltest

import (
	"embed"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
)

// The objects and columns restorewatch's queries use, as each SQL Server
// version has them: one file per version under columns/, with the Microsoft
// page behind every fact in columns/README.md.
//
//go:embed columns/*.txt
var columnFiles embed.FS

// Build is a four-part engine version; a missing part is 0.
type Build [4]int

// ParseBuild reads "13.0.4001.0" (or fewer parts).
func ParseBuild(s string) (Build, error) {
	var b Build
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) > 4 || parts[0] == "" {
		return b, fmt.Errorf("bad version %q", s)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return b, fmt.Errorf("bad version %q", s)
		}
		b[i] = n
	}
	return b, nil
}

func (b Build) less(o Build) bool { return slices.Compare(b[:], o[:]) < 0 }

func (b Build) String() string { return fmt.Sprintf("%d.%d.%d.%d", b[0], b[1], b[2], b[3]) }

// Schema is what one SQL Server version has of the objects the queries use.
// An object or column may carry the build that added it (a service pack);
// below that build it is absent.
type Schema struct {
	Name  string // file name: 2008R2, 2012 … 2022, MI
	RTM   Build  // the version's first build: the floor every check holds
	Major int    // the major version SERVERPROPERTY('ProductVersion') reports
	objs  map[string]*schemaObject
}

type schemaObject struct {
	since Build
	cols  map[string]Build
}

// Schemas returns every version's schema, oldest first (MI last).
func Schemas() []*Schema { return schemas() }

var schemas = sync.OnceValue(func() []*Schema {
	files, err := columnFiles.ReadDir("columns")
	if err != nil {
		panic(err)
	}
	var out []*Schema
	for _, f := range files {
		b, err := columnFiles.ReadFile("columns/" + f.Name())
		if err != nil {
			panic(err)
		}
		s, err := ParseSchema(strings.TrimSuffix(f.Name(), path.Ext(f.Name())), string(b))
		if err != nil {
			panic(fmt.Sprintf("mssqltest: columns/%s: %v", f.Name(), err))
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *Schema) int {
		if (a.Name == "MI") != (b.Name == "MI") {
			if a.Name == "MI" {
				return 1
			}
			return -1
		}
		return slices.Compare(a.RTM[:], b.RTM[:])
	})
	return out
})

// SchemaFor returns the schema of the SQL Server version build belongs to
// (10 = 2008 R2's, 17 and later = 2022's), or nil.
func SchemaFor(build Build) *Schema {
	var best *Schema
	for _, s := range Schemas() {
		if s.Name != "MI" && s.RTM[0] <= build[0] && (best == nil || best.RTM.less(s.RTM)) {
			best = s
		}
	}
	return best
}

// SchemaNamed returns the schema of the named file ("2014", "MI"), or nil.
func SchemaNamed(name string) *Schema {
	for _, s := range Schemas() {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// ParseSchema reads a columns file:
//
//	version 10.50.1600.1   the first build (RTM)
//	major 10               what SERVERPROPERTY('ProductVersion') reports
//	sys.dm_server_services>=10.50.2500: servicename instant_file_initialization_enabled>=11.0.7001
//
// "# " starts a comment. Errors name the line.
func ParseSchema(name, text string) (*Schema, error) {
	s := &Schema{Name: name, objs: map[string]*schemaObject{}}
	withBuild := func(word string, line int) (string, Build, error) {
		n, v, ok := strings.Cut(word, ">=")
		if !ok {
			return strings.ToLower(n), Build{}, nil
		}
		b, err := ParseBuild(v)
		if err != nil {
			return "", b, fmt.Errorf("line %d: %v", line, err)
		}
		return strings.ToLower(n), b, nil
	}
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		if j := strings.Index(line, "#"); j >= 0 {
			line = line[:j]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		key, rest, ok := strings.Cut(line, ":")
		if !ok {
			f := strings.Fields(line)
			if len(f) != 2 {
				return nil, fmt.Errorf("line %d: want \"object: columns\", \"version V\" or \"major N\"", n)
			}
			var err error
			switch f[0] {
			case "version":
				s.RTM, err = ParseBuild(f[1])
			case "major":
				s.Major, err = strconv.Atoi(f[1])
			default:
				err = fmt.Errorf("unknown setting %s", f[0])
			}
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", n, err)
			}
			continue
		}
		obj, since, err := withBuild(strings.TrimSpace(key), n)
		if err != nil {
			return nil, err
		}
		if s.objs[obj] != nil {
			return nil, fmt.Errorf("line %d: %s listed twice", n, obj)
		}
		o := &schemaObject{since: since, cols: map[string]Build{}}
		for _, w := range strings.Fields(rest) {
			col, b, err := withBuild(w, n)
			if err != nil {
				return nil, err
			}
			o.cols[col] = b
		}
		s.objs[obj] = o
	}
	if s.RTM[0] == 0 || s.Major == 0 {
		return nil, fmt.Errorf("no version or major line")
	}
	return s, nil
}

// HasObject reports whether the object exists at build.
func (s *Schema) HasObject(obj string, build Build) bool {
	o := s.objs[obj]
	return o != nil && !build.less(o.since)
}

// Has reports whether the object and column exist at build.
func (s *Schema) Has(obj, col string, build Build) bool {
	if !s.HasObject(obj, build) {
		return false
	}
	b, ok := s.objs[obj].cols[strings.ToLower(col)]
	return ok && !build.less(b)
}

// Names lists every object ("sys.x") and column ("sys.x.col") the file
// names, at any build, sorted.
func (s *Schema) Names() []string {
	var out []string
	for o, obj := range s.objs {
		out = append(out, o)
		for c := range obj.cols {
			out = append(out, o+"."+c)
		}
	}
	slices.Sort(out)
	return out
}

// Builds returns the builds at which the version's objects and columns
// change: its first build and each service pack the file names.
func (s *Schema) Builds() []Build {
	out := []Build{s.RTM}
	for _, o := range s.objs {
		out = append(out, o.since)
		for _, b := range o.cols {
			out = append(out, b)
		}
	}
	out = slices.DeleteFunc(out, func(b Build) bool { return b.less(s.RTM) })
	slices.SortFunc(out, func(a, b Build) int { return slices.Compare(a[:], b[:]) })
	return slices.Compact(out)
}

// holds evaluates a guard at build, as SQL Server evaluates COL_LENGTH and
// OBJECT_ID.
func (s *Schema) holds(c Cond, build Build) bool {
	all := true
	for _, p := range c.Probes {
		if p.Column == "" && !s.HasObject(p.Object, build) || p.Column != "" && !s.Has(p.Object, p.Column, build) {
			all = false
		}
	}
	return all != c.Else
}

// Reached reports whether every guard on the way to r holds at build.
func (s *Schema) Reached(r Ref, build Build) bool {
	for _, c := range r.Guards {
		if !s.holds(c, build) {
			return false
		}
	}
	return true
}

// Check runs refs (from Analyze) against the version at build and returns
// the error SQL Server would stop the batch with, or nil:
//
//   - outside dynamic SQL, a column of an existing object is bound when the
//     batch compiles, whatever IF it sits under: a missing one fails the
//     whole batch (Msg 207) even in a branch that never runs. This model
//     also fails a missing object there (Msg 208), which SQL Server would
//     defer to the statement's execution: stricter, never laxer.
//   - inside dynamic SQL, a name is bound only if the EXEC runs.
func (s *Schema) Check(refs []Ref, build Build) error {
	for _, r := range refs {
		if r.Dynamic && !s.Reached(r, build) {
			continue
		}
		switch {
		case !s.HasObject(r.Object, build) && r.Proc:
			return tdstest.Error{Number: 2812, Class: 16, Message: fmt.Sprintf("Could not find stored procedure '%s'.", r.Object)}
		case !s.HasObject(r.Object, build):
			return tdstest.Error{Number: 208, Class: 16, Message: fmt.Sprintf("Invalid object name '%s'.", r.Object)}
		case r.Column != "" && !s.Has(r.Object, r.Column, build):
			return tdstest.Error{Number: 207, Class: 16, Message: fmt.Sprintf("Invalid column name '%s'.", r.Column)}
		}
	}
	return nil
}

// Selects reports whether a batch that passed Check reads obj.col at build:
// whether the branch naming it runs.
func (s *Schema) Selects(refs []Ref, obj, col string, build Build) bool {
	for _, r := range refs {
		if r.Object == obj && strings.EqualFold(r.Column, col) && s.Reached(r, build) {
			return true
		}
	}
	return false
}
