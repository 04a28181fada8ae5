package csv

import (
	"fmt"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// The day/month order of a dbatools export's culture dates comes from
// Options.DateFormat, or from the first date in the file that reads only one
// way; rows whose dates read both ways wait for it (a bounded number), and
// a file where nothing tells fails rather than being read by a guess.

type pendingRow struct {
	rec  []string
	line int
}

// maxPending bounds the rows held while no date has told the day/month
// order yet (a few MB): restore dates of 20,000 restores that all fall on
// the 12th of a month or earlier are a file to ask about, not to guess.
const maxPending = 20_000

// wait looks at the culture dates of a dbatools row while the day/month
// order is unknown. It settles the order from the first date that reads
// only one way, and reports whether the row must wait: it has a date that
// reads both ways, or rows before it are waiting.
func (p *parser) wait(rec []string, line int) bool {
	if len(rec) != p.hdr.names {
		return len(p.pending) > 0 && p.hold(rec, line)
	}
	both := false
	for i, c := range p.hdr.cols {
		switch c {
		case colRestoreDate, colStopAt, colBackupStart, colBackupFinish:
		default:
			continue
		}
		f := rec[i]
		if isNull(f) {
			continue
		}
		if _, ok := parseDate(f); ok {
			continue
		}
		d, ok := scanCultureDate(f)
		if !ok {
			continue
		}
		switch o, valid := d.evidence(); {
		case !valid || o == orderYMD:
		case o == orderUnknown:
			both = true
		default:
			p.order, p.orderLine, p.orderValue = o, line, trimSpace(f)
			return false
		}
	}
	if both || len(p.pending) > 0 {
		return p.hold(rec, line)
	}
	return false
}

func (p *parser) hold(rec []string, line int) bool {
	p.pending = append(p.pending, pendingRow{rec: append([]string(nil), rec...), line: line})
	return true
}

// flush parses the waiting rows once the order is known; at the end of the
// file (last) rows still waiting mean no date told the order.
func (p *parser) flush(last bool) error {
	if len(p.pending) == 0 {
		return nil
	}
	if last && p.order == orderUnknown {
		return p.undecided()
	}
	for _, r := range p.pending {
		if err := p.row(r.rec, r.line); err != nil {
			return err
		}
	}
	p.pending = nil
	return nil
}

// undecided is the error for a file whose dates never tell day from month.
func (p *parser) undecided() error {
	ex := p.pending[0]
	val := ""
	for i, c := range p.hdr.cols {
		if c == colRestoreDate || c == colStopAt || c == colBackupStart || c == colBackupFinish {
			if d, ok := scanCultureDate(ex.rec[i]); ok && d.ambiguous() {
				val = trimSpace(ex.rec[i])
				break
			}
		}
	}
	scope := "no date in the file"
	if len(p.pending) > maxPending {
		scope = fmt.Sprintf("none of the first %d rows' dates", maxPending)
	}
	return store.Errorf(store.EINVALID, "csv: %s:%d: the date %q reads as day/month or month/day, and %s tells which; "+
		"pass --date-format with the exporting machine's order: DMY, MDY or its pattern, e.g. dd/MM/yyyy "+
		"((Get-Culture).DateTimeFormat.ShortDatePattern shows it)", p.opt.File, ex.line, val, scope)
}

// date parses a date field: the export query's own form, and for a dbatools
// export also PowerShell's culture form in the file's day/month order.
func (p *parser) date(f string) (time.Time, string) {
	if t, ok := parseDate(f); ok {
		return t, ""
	}
	if p.hdr.export == exportHistory {
		return time.Time{}, wantDate
	}
	d, ok := scanCultureDate(f)
	if !ok {
		return time.Time{}, wantCultureDate
	}
	if t, ok := d.resolve(p.order); ok {
		return t, ""
	}
	if _, valid := d.evidence(); !valid {
		return time.Time{}, wantCultureDate
	}
	switch {
	case p.order == orderUnknown:
		return time.Time{}, "reads as day/month or month/day (pass --date-format)"
	case p.orderFixed:
		return time.Time{}, fmt.Sprintf("not a date in the %s order of --date-format", p.order)
	}
	return time.Time{}, fmt.Sprintf("not a date in the %s order that line %d (%q) showed; pass --date-format if the file mixes cultures",
		p.order, p.orderLine, p.orderValue)
}
