package mssqltest

import (
	"strings"

	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
)

// checked is a batch the instance has held against its version's schema.
type checked struct {
	refs   []Ref
	schema *Schema
	build  Build
	err    error // what SQL Server would stop the batch with
}

// selects reports whether the batch reads obj.col on this version: whether
// the branch naming it runs.
func (c checked) selects(obj, col string) bool {
	if c.schema == nil {
		for _, r := range c.refs {
			if r.Object == obj && strings.EqualFold(r.Column, col) {
				return true
			}
		}
		return false
	}
	return c.schema.Selects(c.refs, obj, col, c.build)
}

// check reads a batch and answers, as the instance's version would, with
// "Invalid column name" (207), "Invalid object name" (208) or "Could not
// find stored procedure" (2812) when it names what the version lacks.
func (in *Instance) check(sql string) checked {
	s, build := in.version()
	refs, err := Analyze(sql)
	if err != nil {
		return checked{err: tdstest.Error{Number: 50000, State: 1, Class: 16, Message: "mssqltest cannot read this batch: " + err.Error()}}
	}
	c := checked{refs: refs, schema: s, build: build}
	if s != nil {
		c.err = s.Check(refs, build)
	}
	return c
}

// version returns the schema and build the instance answers as: the one
// SetSchema fixed, or the one of its version's release.
func (in *Instance) version() (*Schema, Build) {
	b, err := ParseBuild(in.host.Version)
	if err != nil {
		return nil, b
	}
	if in.schema != nil {
		return in.schema, b
	}
	return SchemaFor(b), b
}

// SetSchema makes the instance answer with the objects and columns of s
// (from SchemaNamed, e.g. "MI" for Azure SQL Managed Instance, which reports
// version 12.0.2000.8) instead of those of its version's release; nil goes
// back to those.
func (in *Instance) SetSchema(s *Schema) { defer in.lock()(); in.schema = s }
