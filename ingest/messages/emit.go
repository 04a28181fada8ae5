package messages

import (
	"fmt"
	"time"
)

// Dating and handing on: a restore waits in undated until a "Completion
// time:" stamp (or the end, with --at) dates it, then in ready until a later
// statement can no longer change its kind (kind.go), then goes to the sink.

// stamp dates the restores since the previous stamp: SSMS prints one
// "Completion time" when the whole batch ends. The stamp is the client's
// clock and zone, which for a restore run on the server's own console are
// the instance's.
func (p *parser) stamp(wall time.Time, off int) error {
	p.cur = statement{}
	p.endBatch()
	p.date(wall, off)
	return p.emit()
}

func (p *parser) date(wall time.Time, off int) {
	for i := range p.undated {
		o := off
		p.undated[i].CompletedAt = wall
		p.undated[i].UTCOffset = &o
	}
}

// flush hands on the restores that no stamp followed, dated at (if set).
func (p *parser) flush(at time.Time) error {
	if !at.IsZero() {
		p.date(wallClock(at))
	}
	return p.emit()
}

func (p *parser) emit() error {
	for _, l := range p.undated {
		if l.CompletedAt.IsZero() {
			p.st.Untimed++
			p.reject(l.Origin.Line, fmt.Sprintf("%s of database %q (%d pages in %.3f seconds) has no completion time "+
				"(no \"Completion time:\" stamp follows it and no --at was given); not imported: %s",
				l.Statement, l.Database, l.Pages, l.Seconds, UntimedAdvice))
			continue
		}
		p.ready = append(p.ready, l)
	}
	p.undated = p.undated[:0]
	if len(p.ready) < maxReady {
		return nil
	}
	return p.send()
}

// maxReady bounds the dated restores held for a later statement's verdict
// on their kind: a chain's next statement comes within a few lines.
const maxReady = 256

// send hands the held dated restores to the sink.
func (p *parser) send() error {
	for _, l := range p.ready {
		if err := p.sink.LogRestore(l); err != nil {
			return fmt.Errorf("messages: %s: %w", l.Origin, err)
		}
		p.st.Restores++
	}
	p.ready = p.ready[:0]
	return nil
}
