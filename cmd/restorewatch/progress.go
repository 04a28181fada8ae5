package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/schollz/progressbar/v3"
)

// phaseBars draws the warehouse's Progress reports on a terminal, one bar
// per phase, so that the half minute a large import spends deriving,
// indexing and analysing after its file is read is not a silent one. Reports
// come from several goroutines.
type phaseBars struct {
	mu     sync.Mutex
	w      io.Writer
	before func() // run at the first report: ends the file's own bar
	phase  string
	bar    *progressbar.ProgressBar
}

func (p *phaseBars) report(pr store.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr.Phase != p.phase {
		if p.before != nil {
			p.before()
			p.before = nil
		}
		p.end()
		p.phase = pr.Phase
		p.bar = progressbar.NewOptions(pr.Total, progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(pr.Phase), progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30), progressbar.OptionThrottle(100*time.Millisecond))
	}
	_ = p.bar.Set(pr.Done)
}

// finish ends the last bar.
func (p *phaseBars) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.end()
}

func (p *phaseBars) end() {
	if p.bar != nil {
		_ = p.bar.Finish()
		fmt.Fprintln(p.w)
		p.bar = nil
	}
}
