package demo

import (
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// series is one restore job of an instance and the state it carries from
// run to run (its LSN chain, the end of its last run).
type series struct {
	in       *instance
	idx      int
	kind     jobKind
	db       string
	srcDB    string
	src      string
	family   string
	created  time.Time // the source database's creation date (1826x lines)
	dbid     int
	pages0   float64 // logical size in 8 KiB pages at the start of the period
	growth   float64
	ratio    float64 // 0 = uncompressed
	level    float64 // MiB/s
	stripes  int
	dirs     []stamped[string]
	bufs     []stamped[bufCfg]
	srcBlds  []stamped[string]
	cadence  time.Duration
	tod      time.Duration
	copyOnly bool
	checksum bool
	user     string
	story    storyKind
	changeAt time.Time
	storyIdx int

	natural int           // runs the cadence gives in the period
	n       int           // runs to write
	base    time.Time     // first run, UTC
	span    time.Duration // time the runs spread over
	rng     *rand.Rand
	lsn     lsn // next LSN of the source database's log
	prevEnd time.Time
	// over holds the runs of the backup history's days that restored
	// over the database (a full, or a full and its differential): no
	// backup of it runs meanwhile, and each starts a new chain.
	over []span
}

// span is a run's start and end, UTC.
type span struct{ start, end time.Time }

// bufCfg is a restore's BUFFERCOUNT and MAXTRANSFERSIZE as TF 3213 shows them.
type bufCfg struct{ count, maxKiB int64 }

func (p *plan) newSeries(in *instance, j int, js jobShape, orig bool, r *rand.Rand) *series {
	s := &series{in: in, idx: j, kind: js.kind, db: js.db, srcDB: js.srcDB, src: js.src, dbid: 5 + j,
		pages0: js.sizeGiB * (1 << 17), growth: js.growth, ratio: js.ratio, level: js.level, stripes: js.stripes,
		cadence: js.cadence, tod: js.tod, copyOnly: js.copyOnly, checksum: !js.noChecksum, story: js.story}
	if s.growth == 0 {
		s.growth = 1
	}
	srcBuild := js.srcBuild
	if !orig {
		// A copy: its own database name, source server, size, speed and hour.
		s.story = stStable
		s.db = genericDBs[r.IntN(len(genericDBs))]
		for _, o := range in.series {
			if strings.EqualFold(o.db, s.db) {
				s.db += "_2" // one destination database per job and instance
			}
		}
		s.srcDB = ""
		s.src = "SQLPROD" + itoa(int64(13+r.IntN(87)))
		s.pages0 *= math.Exp(0.5 * r.NormFloat64())
		s.level *= math.Exp(0.3 * r.NormFloat64())
		if s.growth > 1.2 {
			s.growth = 1.1
		}
		if s.cadence >= day {
			s.tod += time.Duration(r.IntN(90)) * time.Minute
		}
	}
	if s.srcDB == "" {
		s.srcDB = s.db
	}
	s.family = uuidOf(r)
	s.created = time.Date(2012+r.IntN(10), time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), 0, time.UTC)
	s.user = `CORP\svc_sqlagent`
	if in.linux {
		s.user = "sa"
	}
	if s.kind == jobManual {
		s.user = `CORP\adm.mkowalski`
	}
	s.dirs = []stamped[string]{{v: js.dir}}
	s.srcBlds = []stamped[string]{{v: threePart(srcBuild)}}
	def := bufCfg{count: int64(4 + 2*s.stripes), maxKiB: 1024}
	if s.stripes == 1 {
		def.count = 6 // seed 003's default for one device
	}
	s.bufs = []stamped[bufCfg]{{v: def}}
	switch s.story {
	case stTuningLost:
		s.bufs = []stamped[bufCfg]{{v: bufCfg{64, 4096}}, {v: bufCfg{7, 1024}}}
	case stSourceUpgrade:
		s.srcBlds = append(s.srcBlds, stamped[string]{v: "13.0.4474"})
	case stShareMove:
		s.dirs = append(s.dirs, stamped[string]{v: js.newDir})
	}
	s.rng = rand.New(rand.NewPCG(in.seed, uint64(j)+1))
	s.lsn = lsn{a: 1000 + uint64(s.rng.IntN(90000)), b: 16 + uint64(s.rng.IntN(90000)), c: 1}
	return s
}

// per is the number of restores one run writes.
func (s *series) per() int {
	if s.kind == jobFullDiff {
		return 2
	}
	return 1
}

// schedule places the runs: the first at the job's local time of day (or
// week) after the period starts, one per cadence, the last leaving room to
// finish before Now. Manual restores are four, in the last five weeks.
func (s *series) schedule(p *plan) {
	in := s.in
	// The change dates are known now; moves of the story to its change.
	for i := range s.dirs[1:] {
		s.dirs[i+1].from = s.changeAt
	}
	for i := range s.bufs[1:] {
		s.bufs[i+1].from = s.changeAt
	}
	for i := range s.srcBlds[1:] {
		// The source was upgraded the morning before the first slow restore,
		// so the nightly backup that restore reads was taken on the new build.
		s.srcBlds[i+1].from = s.changeAt.Add(-20 * hour)
	}
	if s.kind == jobManual {
		s.natural = 4
		return
	}
	first := in.local(p.p0).Truncate(day).Add(day)
	if s.cadence == week {
		for first.Weekday() != time.Sunday {
			first = first.Add(day)
		}
	}
	s.base = in.utc(first.Add(s.tod))
	margin := 14 * hour
	if s.cadence < day {
		margin = s.cadence
	}
	room := p.p1.Add(-margin).Sub(s.base)
	if room < 0 {
		return
	}
	s.natural = int(room/s.cadence) + 1
	s.span = time.Duration(s.natural) * s.cadence
}

// manualAt are the local days (before Now) and times of the manual restores.
var manualAt = []struct {
	daysBack int
	tod      time.Duration
}{{33, hm(10, 15)}, {25, hm(14, 40)}, {12, hm(16, 5)}, {4, hm(11, 20)}}

// slot is the planned start of run k, before the Agent's start delay.
func (s *series) slot(p *plan, k int) time.Time {
	if s.kind == jobManual {
		m := manualAt[k%len(manualAt)]
		return s.in.utc(s.in.local(p.p1).Truncate(day).AddDate(0, 0, -m.daysBack).Add(m.tod))
	}
	return s.base.Add(time.Duration(float64(s.span) * float64(k) / float64(s.n)))
}

// uuidOf draws a version-4 UUID, upper case as SQL Server shows uniqueidentifier.
func uuidOf(r *rand.Rand) string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hex = "0123456789ABCDEF"
	out := make([]byte, 0, 36)
	for i, x := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[x>>4], hex[x&15])
	}
	return string(out)
}
