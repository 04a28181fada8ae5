package demo

import (
	"container/heap"
	"math/rand/v2"
	"sort"
	"time"
)

// instance writes one instance: its runs in start order into the history
// CSV, and their lines into its error logs. Only the next run of each job is
// in memory.
func (g *gen) instance(in *instance) error {
	p := g.plan
	bounds := p.boundaries(in)
	window := p.p0.Add(time.Duration((1 - in.windowFrac) * float64(p.p1.Sub(p.p0))))
	var kept []boundary
	for _, b := range bounds {
		if !b.at.Before(window) {
			kept = append(kept, b)
		}
	}
	if len(kept) > 0 {
		window = kept[0].at
	} else {
		window = p.p1
	}
	lw := newLogWriter(g, in, kept)
	noise := rand.New(rand.NewPCG(in.seed, 0x4E015E))
	hist := int64(1000 + noise.IntN(50000))
	var runs jobHeap
	for _, s := range in.series {
		s.prevEnd = time.Time{}
		if s.n > 0 {
			heap.Push(&runs, s.draw(p, 0))
		}
	}
	var ends []time.Time   // completions near the current time
	var spids []restoreEnd // sessions busy restoring
	for runs.Len() > 0 {
		j := runs[0]
		if d := conflict(j, bounds, ends); d > 0 {
			j.shift(d)
			heap.Fix(&runs, 0)
			continue
		}
		heap.Pop(&runs)
		s := j.s
		s.prevEnd = j.end()
		if j.k+1 < s.n {
			heap.Push(&runs, s.draw(p, j.k+1))
		}
		if j.end().After(p.p1) {
			continue // pushed past Now by restarts in its way: it has not happened yet
		}
		if s.kind != jobLog && j.end().After(p.p1.Add(-(BackupDays+2)*day)) {
			s.over = append(s.over, span{j.start(), j.end()})
		}
		start := j.start()
		if err := lw.advance(start); err != nil {
			return err
		}
		ends = pruneBefore(ends, start.Add(-5*time.Second))
		spid := takeSpid(&spids, start, j.end(), 51+s.idx*4)
		inLog := !start.Before(window)
		if inLog && noise.IntN(8) == 0 {
			// A failed login now and then, as every real log has.
			t := start.Add(-time.Duration(noise.IntN(40*60)) * time.Second)
			lw.push(t, "Logon", "Error: 18456, Severity: 14, State: 8.")
			lw.push(t, "Logon", "Login failed for user 'sa'. Reason: Password did not match that for the login provided. [CLIENT: 10.20."+
				itoa(int64(noise.IntN(250)))+"."+itoa(int64(1+noise.IntN(250)))+"]")
		}
		for _, r := range j.restores {
			r.spid, r.histID, r.inLog = spid, hist, inLog
			hist++
			ends = append(ends, r.end())
			if err := g.emit(lw, r); err != nil {
				return err
			}
		}
	}
	return lw.finish(p.p1)
}

// emit writes one restore to every file that shows it.
func (g *gen) emit(lw *logWriter, r *restore) error {
	s := r.s
	if err := g.history.write(r); err != nil {
		return err
	}
	g.restores++
	st := &g.plan.stories[s.storyIdx]
	if r.changed && st.ChangedAt.IsZero() && r.kind == s.restoreKind() {
		st.ChangedAt = r.end().Add(-30 * time.Millisecond).Truncate(10 * time.Millisecond)
	}
	if g.truth != nil {
		if err := g.truth.write(r, st.Name); err != nil {
			return err
		}
	}
	if !r.inLog {
		return nil
	}
	lw.restore(r)
	if s.kind == jobManual {
		return g.messages.write(r)
	}
	return nil
}

// conflict says how far a run must move so that it neither spans a restart
// or log cycle (a restart kills a restore; a cycle would split its lines
// across files) nor completes within two seconds of another restore of the
// instance (the 3014 line names no database: it belongs to the completion
// line just before it, so two completions must not interleave).
func conflict(j *job, bounds []boundary, ends []time.Time) time.Duration {
	start, end := j.start(), j.end()
	i := sort.Search(len(bounds), func(i int) bool { return bounds[i].at.After(start.Add(-2 * time.Minute)) })
	if i < len(bounds) && bounds[i].at.Before(end.Add(2*time.Minute)) {
		return bounds[i].at.Add(3 * time.Minute).Sub(start)
	}
	for _, r := range j.restores {
		for _, e := range ends {
			if d := r.end().Sub(e); d > -2*time.Second && d < 2*time.Second {
				return 3 * time.Second
			}
		}
	}
	return 0
}

func pruneBefore(ts []time.Time, t time.Time) []time.Time {
	out := ts[:0]
	for _, x := range ts {
		if !x.Before(t) {
			out = append(out, x)
		}
	}
	return out
}

// restoreEnd is a session busy until end.
type restoreEnd struct {
	spid int
	end  time.Time
}

// takeSpid gives the run a session not busy with another restore, starting
// from the job's usual one, so concurrent restores print trace lines from
// different spids, as on a real server.
func takeSpid(busy *[]restoreEnd, start, end time.Time, want int) int {
	live := (*busy)[:0]
	for _, b := range *busy {
		if !b.end.Before(start) {
			live = append(live, b)
		}
	}
	for taken := true; taken; {
		taken = false
		for _, b := range live {
			if b.spid == want {
				want++
				taken = true
			}
		}
	}
	*busy = append(live, restoreEnd{want, end})
	return want
}

// boundaries are the instance's restarts (every five weeks on a Saturday
// afternoon, and at a story's CU or hardware move) and its weekly
// sp_cycle_errorlog (Sunday, half an hour after the restart time).
func (p *plan) boundaries(in *instance) []boundary {
	r := rand.New(rand.NewPCG(in.seed, 0xB0B))
	var bs []boundary
	first := in.saturdayAfter(p.p0.Add(time.Duration(r.IntN(35)) * day))
	for t := first; t.Before(p.p1); t = t.Add(5 * week) {
		near := false
		for _, x := range in.restarts {
			if d := x.Sub(t); d > -10*day && d < 10*day {
				near = true
			}
		}
		if !near {
			bs = append(bs, boundary{at: t, restart: true})
		}
	}
	for _, x := range in.restarts {
		bs = append(bs, boundary{at: x, restart: true})
	}
	cycle := in.local(in.saturdayAfter(p.p0)).Truncate(day).Add(day + in.restartTOD + 30*time.Minute)
	for t := in.utc(cycle); t.Before(p.p1); t = t.Add(week) {
		bs = append(bs, boundary{at: t})
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].at.Before(bs[j].at) })
	out := bs[:0]
	for _, b := range bs {
		if !b.at.Before(p.p0) && b.at.Before(p.p1) {
			out = append(out, b)
		}
	}
	return out
}

// jobHeap orders pending runs by start, then by job, so ties break the
// same way every time.
type jobHeap []*job

func (h jobHeap) Len() int { return len(h) }
func (h jobHeap) Less(i, j int) bool {
	a, b := h[i].start(), h[j].start()
	if !a.Equal(b) {
		return a.Before(b)
	}
	return h[i].s.idx < h[j].s.idx
}
func (h jobHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *jobHeap) Push(x any)   { *h = append(*h, x.(*job)) }
func (h *jobHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
