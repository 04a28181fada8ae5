package demo

import (
	"math"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// restore is one RESTORE statement with everything every file says of it.
// Its duration is the truth: the 3014 line prints it and the warehouse must
// find it again.
type restore struct {
	s          *series
	kind       store.Kind
	start      time.Time // UTC, whole milliseconds
	durMS      int64
	pages      int64 // data pages (3014 adds logPages)
	logPages   int64
	backupSize int64
	compSize   int64
	first      lsn
	last       lsn
	devices    []string
	bStart     time.Time // backup start and finish on the source, UTC
	bFinish    time.Time
	uuid       string
	srcBuild   string // three-part
	buf        bufCfg
	recovery   bool
	replace    bool
	changed    bool     // the story's change shows in this restore
	rec        [4]int64 // 3421: seconds, analysis, redo, undo (ms)
	spid       int
	histID     int64
	inLog      bool
}

func (r *restore) end() time.Time        { return r.start.Add(time.Duration(r.durMS) * time.Millisecond) }
func (r *restore) totalPages() int64     { return r.pages + r.logPages }
func (r *restore) shift(d time.Duration) { r.start = r.start.Add(d) }

// job is one run of a series: one restore, or a full and its diff.
type job struct {
	s        *series
	k        int
	restores []*restore
}

func (j *job) start() time.Time { return j.restores[0].start }
func (j *job) end() time.Time   { return j.restores[len(j.restores)-1].end() }
func (j *job) shift(d time.Duration) {
	for _, r := range j.restores {
		r.shift(d)
	}
}

// lsn is an error-log LSN a:b:c; msdb stores a·10^15 + b·10^5 + c.
type lsn struct{ a, b, c uint64 }

func (l lsn) String() string {
	return itoa(int64(l.a)) + ":" + itoa(int64(l.b)) + ":" + itoa(int64(l.c))
}

// numeric converts through the store's own conversion, so the demo and the
// importer agree by construction.
func (l lsn) numeric() string {
	n, err := store.LSNFromLog(l.String())
	if err != nil {
		panic("demo: " + err.Error()) // the parts stay in range by construction
	}
	return n
}

// draw makes run k of the series. Every random value is drawn here, in a
// fixed order from the series' own stream, so moving a run later (a restart
// in the way) never changes what the rest of the fleet looks like.
func (s *series) draw(p *plan, k int) *job {
	r := s.rng
	start := s.slot(p, k)
	// The Agent starts the step seconds after the schedule; people are late.
	start = start.Add(time.Duration(5000+r.IntN(70000)) * time.Millisecond)
	if min := s.prevEnd.Add(5 * time.Minute); start.Before(min) {
		start = min
	}
	frac := math.Min(math.Max(float64(start.Sub(p.p0))/float64(p.p1.Sub(p.p0)), 0), 1)
	pages := s.pages0 * math.Pow(s.growth, frac) * (1 + 0.003*r.NormFloat64())
	j := &job{s: s, k: k}
	switch s.kind {
	case jobFull, jobManual:
		j.restores = append(j.restores, s.restore(p, k, store.KindFull, start, pages, true))
	case jobFullDiff:
		full := s.restore(p, k, store.KindFull, start, pages, false)
		diffAt := full.end().Add(time.Duration(8000+r.IntN(12000)) * time.Millisecond)
		diff := s.restore(p, k, store.KindDiff, diffAt, pages*(0.03+0.09*r.Float64()), true)
		// A diff is taken after the full it is based on.
		took := diff.bFinish.Sub(diff.bStart)
		diff.bStart = full.bFinish.Add(30 * time.Second)
		diff.bFinish = diff.bStart.Add(took)
		diff.srcBuild = at(s.srcBlds, diff.bStart)
		diff.devices = s.devices(diff.kind, diff.bStart, diff.start)
		j.restores = append(j.restores, full, diff)
	case jobLog:
		j.restores = append(j.restores, s.restore(p, k, store.KindLog, start, pages*math.Exp(0.5*r.NormFloat64()), false))
	}
	return j
}

// restore draws one restore of kind starting at start with the given data pages.
func (s *series) restore(p *plan, k int, kind store.Kind, start time.Time, pages float64, recovery bool) *restore {
	r := s.rng
	x := &restore{s: s, kind: kind, start: start.Truncate(time.Millisecond), recovery: recovery}
	x.replace = kind == store.KindFull && s.kind != jobManual
	x.pages = int64(math.Max(pages, 8))
	x.logPages = 2 + int64(r.IntN(30))
	if kind == store.KindLog {
		x.pages, x.logPages = 0, x.pages
	}
	x.backupSize = (x.totalPages() + 24 + int64(r.IntN(40))) * 8192
	x.compSize = x.backupSize
	if s.ratio > 0 {
		x.compSize = int64(float64(x.backupSize) * s.ratio * (1 + 0.01*r.NormFloat64()))
	}
	// The backup ran on the source before the restore read it.
	var before time.Duration
	switch {
	case kind == store.KindLog:
		before = 3*time.Minute + time.Duration(r.IntN(60000))*time.Millisecond
	case s.kind == jobManual:
		before = 8*hour + time.Duration(r.IntN(6*3600))*time.Second
	default:
		before = 25*time.Minute + time.Duration(r.IntN(150*60))*time.Second
	}
	x.bFinish = x.start.Add(-before)
	backupMiBps := 250 + 150*r.Float64()
	x.bStart = x.bFinish.Add(-time.Duration(float64(x.compSize)/(1<<20)/backupMiBps*1000) * time.Millisecond)
	x.srcBuild = at(s.srcBlds, x.bStart)
	x.buf = at(s.bufs, x.start)
	x.devices = s.devices(kind, x.bStart, x.start)
	x.first, x.last = s.nextLSN(kind)
	x.uuid = uuidOf(r)
	// ±25 % around the series' level: lognormal, clipped so that noise alone
	// never looks like a story.
	noise := math.Min(math.Max(math.Exp(0.1*r.NormFloat64()), 0.75), 1.25)
	switch s.story {
	case stSourceUpgrade:
		x.changed = x.srcBuild != s.srcBlds[0].v
	case stOutlier:
		// One run at 70 % of the period: well inside the error-log window.
		x.changed = k == s.n*7/10 && kind == store.KindFull
	case stSlowdown, stShareMove, stTuningLost, stInstanceCU, stImprovement:
		x.changed = !x.start.Before(s.changeAt)
	}
	mibps := s.level * noise
	if x.changed {
		mibps *= storyMult[s.story]
	}
	x.durMS = max(1, int64(math.Round(float64(x.backupSize)/(1<<20)/mibps*1000)))
	if recovery {
		redo := min(200+int64(r.IntN(3000)), x.durMS/4)
		analysis, undo := 5+int64(r.IntN(60)), int64(r.IntN(30))
		x.rec = [4]int64{(analysis + redo + undo) / 1000, analysis, redo, undo}
	}
	return x
}

// nextLSN advances the source database's log: a full or diff covers a short
// stretch; a log backup starts where the previous one ended.
func (s *series) nextLSN(kind store.Kind) (lsn, lsn) {
	r := s.rng
	if kind == store.KindLog {
		first := s.lsn
		next := lsn{a: first.a + uint64(r.IntN(3)), c: 1}
		if next.a == first.a {
			next.b = first.b + 50 + uint64(r.IntN(5000))
		} else {
			next.b = 16 + uint64(r.IntN(99000))
		}
		s.lsn = next
		return first, next
	}
	a := s.lsn.a + 3 + uint64(r.IntN(40))
	first := lsn{a: a, b: 16 + uint64(r.IntN(99000)), c: 1 + uint64(r.IntN(300))}
	last := lsn{a: a, b: first.b + 10 + uint64(r.IntN(500)), c: 1}
	s.lsn = lsn{a: a + 1, b: 16, c: 1}
	return first, last
}

// devices names the backup files: Ola Hallengren's layout
// (SERVER_DB_FULL_yyyymmdd_hhmmss.bak, one file per stripe) in the job's
// folder, or log shipping's DB_yyyymmddhhmmss.trn (UTC) in its copy folder.
func (s *series) devices(kind store.Kind, bStart, start time.Time) []string {
	dir := at(s.dirs, start)
	typ, ext := "FULL", ".bak"
	switch kind {
	case store.KindDiff:
		typ = "DIFF"
	case store.KindLog:
		typ, ext = "LOG", ".trn"
	}
	safe := safeName(s.srcDB)
	dir = strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(dir, "{src}", s.src), "{db}", safe), "{type}", typ)
	sep := `\`
	if strings.HasPrefix(dir, "/") {
		sep = "/"
	}
	local := s.in.local(bStart)
	if s.kind == jobLog {
		return []string{dir + sep + safe + "_" + local.Add(-time.Duration(s.in.tz)*time.Minute).Format("20060102150405") + ext}
	}
	name := s.src + "_" + safe + "_" + typ + "_" + local.Format("20060102_150405")
	if s.stripes == 1 {
		return []string{dir + sep + name + ext}
	}
	out := make([]string, s.stripes)
	for i := range out {
		out[i] = dir + sep + name + "_" + itoa(int64(i+1)) + ext
	}
	return out
}

// safeName keeps what a file name may hold.
func safeName(db string) string {
	var b strings.Builder
	for _, c := range db {
		if c < 128 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b.WriteRune(c)
		}
	}
	return b.String()
}
