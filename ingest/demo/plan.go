package demo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// plan is the fleet before any restore is drawn: instances, their jobs with
// the number of runs each gets, change dates and the stories. It is small
// (one entry per job), whatever the number of restores.
type plan struct {
	cfg       Config
	p0, p1    time.Time // the period, UTC
	instances []*instance
	stories   []Story
}

// instance is one restoring instance of the plan.
type instance struct {
	idx        int
	name, host string
	inst       string // instance part of the name; "" for a default instance
	linux      bool
	tz         int
	endDates   bool
	flags      []int
	align      int64
	ifi        bool
	edition    string
	os         string
	account    string
	builds     []stamped[string]
	hws        []stamped[hardware]
	restartTOD time.Duration
	restarts   []time.Time // restarts beyond the regular ones (CU, hardware), UTC
	windowFrac float64     // share of the period (newest part) kept in error logs
	series     []*series
	seed       uint64
}

// stamped is a value in force from a moment on (zero: from the beginning).
type stamped[T any] struct {
	from time.Time
	v    T
}

func at[T any](vs []stamped[T], t time.Time) T {
	v := vs[0].v
	for _, s := range vs[1:] {
		if !t.Before(s.from) {
			v = s.v
		}
	}
	return v
}

// local converts a UTC instant to the instance's wall time, kept in a UTC
// time.Time as the store does.
func (in *instance) local(t time.Time) time.Time { return t.Add(time.Duration(in.tz) * time.Minute) }

// utc converts the instance's wall time back.
func (in *instance) utc(t time.Time) time.Time { return t.Add(-time.Duration(in.tz) * time.Minute) }

// storyKind is the behaviour a job's series shows.
type storyKind uint8

const (
	stStable storyKind = iota
	stSourceUpgrade
	stSlowdown
	stShareMove
	stTuningLost
	stInstanceCU
	stGrowth
	stOutlier
	stImprovement
)

// storyTruth is what Fleet.Stories says of each kind; the factor values of
// the instance-level stories come from the shape.
var storyTruth = map[storyKind]Story{
	stStable:        {Name: "stable", Expect: "stable"},
	stSourceUpgrade: {Name: "source upgrade", Expect: "regression", Factor: "source_build", Before: "10.50.6542", After: "13.0.4474", KnownIssue: "KB4088193"},
	stSlowdown:      {Name: "4h to 10h", Expect: "regression"},
	stShareMove:     {Name: "share moved", Expect: "regression", Factor: "device_kind", Before: store.DeviceLocal, After: store.DeviceUNC},
	stTuningLost:    {Name: "tuning lost", Expect: "regression", Factor: "buffer_count", Before: "64", After: "7"},
	stInstanceCU:    {Name: "instance CU", Expect: "regression", Factor: "instance_build"},
	stGrowth:        {Name: "growth", Expect: "growth"},
	stOutlier:       {Name: "outlier", Expect: "outlier"},
	stImprovement:   {Name: "improvement", Expect: "improvement", Factor: "cpu_count"},
}

// storyMult is the throughput factor after the change (or on the outlier).
var storyMult = map[storyKind]float64{
	stSourceUpgrade: 262.0 / 892.0, // seed 003: 892 → 262 MiB/s
	stSlowdown:      0.4,           // seed 001: 4 h → 10 h
	stShareMove:     0.5,
	stTuningLost:    0.5,
	stInstanceCU:    0.5,
	stOutlier:       0.15,
	stImprovement:   2,
}

func newPlan(cfg Config) *plan {
	p := &plan{cfg: cfg, p1: cfg.Now, p0: cfg.Now.AddDate(0, -cfg.Months, 0)}
	for i := 0; i < cfg.Instances; i++ {
		p.instances = append(p.instances, p.newInstance(i))
	}
	p.allocate()
	for _, in := range p.instances {
		for _, s := range in.series {
			st := storyTruth[s.story]
			st.Instance, st.Database, st.Kind = in.name, s.db, s.restoreKind()
			switch s.story {
			case stInstanceCU:
				st.Before, st.After = in.builds[0].v, in.builds[1].v
			case stImprovement:
				st.Before, st.After = fmt.Sprint(in.hws[0].v.cpus()), fmt.Sprint(in.hws[1].v.cpus())
			}
			s.storyIdx = len(p.stories)
			p.stories = append(p.stories, st)
			if s.kind == jobFullDiff {
				// The diffs are a series of their own in the warehouse.
				st.Kind = store.KindDiff
				p.stories = append(p.stories, st)
			}
		}
	}
	return p
}

// newInstance makes instance i from shape i mod 12. Only the first copy of a
// shape keeps its story; the copies are stable.
func (p *plan) newInstance(i int) *instance {
	sh := shapes[i%len(shapes)]
	orig := i < len(shapes)
	seed := p.cfg.Seed*0x9E3779B97F4A7C15 + uint64(i)
	r := rand.New(rand.NewPCG(seed, 0xDE70))
	in := &instance{idx: i, name: fmt.Sprintf(sh.pattern, i+1), linux: sh.linux, tz: sh.tz, endDates: sh.endDates,
		flags: sh.flags, align: sh.align, ifi: !sh.noIFI, edition: sh.edition, os: sh.os, restartTOD: sh.restartTOD,
		windowFrac: 0.6 + 0.1*r.Float64(), seed: seed}
	in.host, in.inst, _ = strings.Cut(in.name, `\`)
	if !orig {
		in.tz = zones[r.IntN(len(zones))]
	}
	svc := strings.ToLower(strings.ReplaceAll(in.host, "-", ""))
	in.account = `CORP\svc_` + svc
	in.builds = []stamped[string]{{v: sh.build}}
	in.hws = []stamped[hardware]{{v: sh.hw}}
	// Story changes land between 62 % and 78 % of the period: inside every
	// instance's error-log window (which keeps the newest 60–70 %), with
	// weeks of logged restores on both sides.
	change := p.p0.Add(time.Duration((0.62 + 0.16*r.Float64()) * float64(p.p1.Sub(p.p0))))
	if orig && sh.upgradeTo != "" || orig && sh.newHW != nil {
		restart := in.saturdayAfter(change)
		in.restarts = append(in.restarts, restart)
		if sh.upgradeTo != "" {
			in.builds = append(in.builds, stamped[string]{restart, sh.upgradeTo})
		}
		if sh.newHW != nil {
			in.hws = append(in.hws, stamped[hardware]{restart, *sh.newHW})
		}
		change = restart
	}
	for j, js := range sh.jobs {
		if !orig && js.kind == jobManual {
			continue
		}
		s := p.newSeries(in, j, js, orig, r)
		if s.story != stStable {
			s.changeAt = change
			if s.story != stInstanceCU && s.story != stImprovement {
				s.changeAt = in.utc(in.local(change).Truncate(day)) // from local midnight on
			}
		}
		in.series = append(in.series, s)
	}
	return in
}

// saturdayAfter returns the first Saturday at the restart time on or after t.
func (in *instance) saturdayAfter(t time.Time) time.Time {
	l := in.local(t).Truncate(day)
	for l.Weekday() != time.Saturday {
		l = l.Add(day)
	}
	return in.utc(l.Add(in.restartTOD))
}

// restoreKind is the kind of the series' restores (a full+diff job's
// series is judged on its fulls and told by its diffs).
func (s *series) restoreKind() store.Kind {
	if s.kind == jobLog {
		return store.KindLog
	}
	return store.KindFull
}

// allocate gives every job its number of runs: the natural count of its
// cadence in the period, scaled so the fleet writes Config.Restores.
// Largest remainders make the total exact; a full+diff run is two restores,
// so the last odd one goes to a single-restore job.
func (p *plan) allocate() {
	var all []*series
	natural, fixed := 0, 0
	for _, in := range p.instances {
		for _, s := range in.series {
			s.schedule(p)
			if s.kind == jobManual {
				s.n = s.natural
				fixed += s.n * s.per()
				continue
			}
			all = append(all, s)
			natural += s.natural * s.per()
		}
	}
	target := p.cfg.Restores - fixed
	if p.cfg.Restores == 0 || natural == 0 || target <= 0 {
		for _, s := range all {
			s.n = s.natural
		}
		return
	}
	scale := float64(target) / float64(natural)
	rem := make([]float64, len(all))
	left := target
	for i, s := range all {
		exact := float64(s.natural) * scale
		s.n = int(math.Floor(exact))
		rem[i] = exact - float64(s.n)
		left -= s.n * s.per()
	}
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rem[order[a]] > rem[order[b]] })
	for pass := 0; pass < 2 && left > 0; pass++ {
		for _, i := range order {
			if s := all[i]; left >= s.per() {
				s.n++
				left -= s.per()
			}
		}
	}
}
