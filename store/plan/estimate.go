package plan

import (
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/human"
)

// Estimate is a step's expected duration from measured restores.
type Estimate struct {
	// Seconds is the size over the median logical throughput; LowS and
	// HighS use the fast and slow ends of the range a next restore falls
	// in four times out of five (rangeOf): P90 and P10.
	Seconds float64 `json:"seconds"`
	LowS    float64 `json:"low_s"`
	HighS   float64 `json:"high_s"`
	MiBps   float64 `json:"mibps"`
	P10     float64 `json:"p10_mibps"`
	P90     float64 `json:"p90_mibps"`
	N       int     `json:"n"` // restores the figures rest on; 0 = no estimate
	// Basis says where the figures come from: "measured on I (log restores
	// from local disk)", "estimated from other instances (…)".
	Basis string `json:"basis"`
	Fleet bool   `json:"fleet"` // from other instances than the target
	// Series is true when the figures are the database's own restores of
	// the kind on the target; Since is the first of them, RegressionID
	// the stored regression whose change they start at (0: none).
	Series       bool      `json:"series"`
	Since        time.Time `json:"since,omitzero"`
	RegressionID int64     `json:"regression_id,omitempty"`
	// Other is the second speed a step may run at while the series is
	// watched (its last restore beyond its usual) or in a young regime
	// (confirmed by fewer restores than a regime needs): the range then
	// covers both, and Basis says which is which (issue 37).
	Other *OtherSpeed `json:"other_speed,omitempty"`
	// SetBack is set when the estimate is a counterfactual (issue 38): the
	// script sets these buffers, which the present restores do not use, so
	// the estimate rests on the restores that used them — never measured
	// since — and its backtest replays that path.
	SetBack *Buffers `json:"set_back,omitempty"`
}

// OtherSpeed is an estimate's second speed: "if the last restore's speed
// holds" during a watch, "at the speed before the change" in a young
// regime.
type OtherSpeed struct {
	Label   string  `json:"label"`
	MiBps   float64 `json:"mibps"`
	Seconds float64 `json:"seconds"`
	N       int     `json:"n"` // restores it rests on
}

// Buffers are the BUFFERCOUNT and MAXTRANSFERSIZE of the target instance's
// fastest measured restore from one device kind.
type Buffers struct {
	DeviceKind     string    `json:"device_kind"`
	BufferCount    int64     `json:"buffer_count"`
	MaxTransferKiB int64     `json:"max_transfer_kib"`
	MiBps          float64   `json:"mibps"` // that restore's logical throughput
	At             time.Time `json:"at"`
}

// Plan is a chain with its expected durations and script inputs.
type Plan struct {
	// InFlight is a restore of the database running now on the target
	// (nil: none seen): its own pace beside the estimate from history.
	InFlight       *InFlight `json:"in_flight,omitempty"`
	Instance       string    `json:"instance"` // where the history comes from
	TargetInstance string    `json:"target_instance"`
	Chain
	TotalS float64 `json:"total_s"` // sum of the steps' medians; 0 when a step has no estimate
	LowS   float64 `json:"low_s"`
	HighS  float64 `json:"high_s"`
	// Unestimated counts steps without any measurement to go by.
	Unestimated int           `json:"unestimated"`
	RTO         time.Duration `json:"rto_ns"`
	OverRTO     bool          `json:"over_rto"`
	// Dominant names the part of the plan that takes longest ("the full
	// backup", "80 log backups") and its share of the total.
	Dominant      string             `json:"dominant"`
	DominantShare float64            `json:"dominant_share"`
	Buffers       map[string]Buffers `json:"buffers"` // by device kind
	// Regressions are the target's open or acknowledged regressions of the
	// database's series the plan restores: the page names them at the top.
	Regressions []RegressionRef `json:"regressions"`
	// Calibration says, for each kind the plan restores, how often the
	// target's newest restores fell inside the range this estimator would
	// have given before each (Request.Calibrate).
	Calibration []Calibration `json:"calibration,omitempty"`
	// Replicas are the instances whose backup history the chain merges
	// (an availability group's), and Via how they were found to be one
	// database; empty for one instance's history.
	Replicas []string `json:"replicas,omitempty"`
	Via      string   `json:"via,omitempty"`
}

// Facts are what a plan's expected durations rest on: the measured
// restores (the target instance's, all of them, and the fleet's newest),
// the target's active findings (to name the regression an estimate
// follows), the RTO target and the analysis thresholds (the change points
// an estimate starts after are the analysis' own).
type Facts struct {
	Instance, Target string
	Rates            []store.RestoreRate
	Findings         []store.Regression
	RTO              time.Duration
	Analysis         analysis.Config
}

// Estimates fills each step's expected duration from rates (the target
// instance's measured restores, and the fleet's), the buffer settings of
// the target's fastest restores, the total against rto and the dominant
// part. It knows no findings and uses the default thresholds: EstimatesOf
// is the whole of it.
func Estimates(c Chain, instance, target string, rates []store.RestoreRate, rto time.Duration) Plan {
	return EstimatesOf(c, Facts{Instance: instance, Target: target, Rates: rates, RTO: rto, Analysis: analysis.DefaultConfig()})
}

// EstimatesOf fills each step's expected duration by Rate, the buffer
// settings of the target's fastest restores, the total against the RTO, the
// dominant part and the open regressions the plan restores through.
func EstimatesOf(c Chain, f Facts) Plan {
	target := f.Target
	p := Plan{Instance: f.Instance, TargetInstance: target, Chain: c, RTO: f.RTO, Buffers: map[string]Buffers{}}
	p.Steps = append([]Step(nil), c.Steps...)
	// The rates of one kind from one device kind are the same for every
	// step of that kind (80 logs, one set of rates): judged once.
	memo := map[rateGroup]Estimate{}
	for i := range p.Steps {
		s := &p.Steps[i]
		if _, ok := p.Buffers[s.DeviceKind]; !ok {
			if b, ok := fastest(f.Rates, target, s.DeviceKind); ok {
				p.Buffers[s.DeviceKind] = b
			}
		}
		g := rateGroup{s.Kind, s.DeviceKind}
		rate, ok := memo[g]
		if !ok {
			q := Query{Database: c.Database, Kind: s.Kind, DeviceKind: s.DeviceKind}
			if b, ok := p.Buffers[s.DeviceKind]; ok {
				q.Buffers = &b // the script sets them (Script)
			}
			rate = Rate(f, q)
			memo[g] = rate
		}
		s.Estimate = sized(rate, s.Set.Size)
		if s.Estimate.N == 0 {
			p.Unestimated++
			continue
		}
		p.TotalS += s.Estimate.Seconds
		p.LowS += s.Estimate.LowS
		p.HighS += s.Estimate.HighS
	}
	p.OverRTO = f.RTO > 0 && p.TotalS > f.RTO.Seconds()
	var parts [3]float64
	var logs int
	for _, s := range p.Steps {
		switch s.Kind {
		case store.KindFull:
			parts[0] += s.Estimate.Seconds
		case store.KindDiff:
			parts[1] += s.Estimate.Seconds
		default:
			parts[2] += s.Estimate.Seconds
			logs++
		}
	}
	names := [3]string{"the full backup", "the differential backup", fmt.Sprintf("the %d log backups", logs)}
	if logs == 1 {
		names[2] = "the log backup"
	}
	best := 0
	for i := range parts {
		if parts[i] > parts[best] {
			best = i
		}
	}
	if p.TotalS > 0 {
		p.Dominant, p.DominantShare = names[best], parts[best]/p.TotalS
	}
	kinds := map[store.Kind]bool{}
	for _, s := range p.Steps {
		kinds[s.Kind] = true
	}
	for _, r := range f.Findings {
		if r.Database == c.Database && kinds[r.Kind] && strings.EqualFold(r.Instance, target) &&
			r.Direction != "improvement" && r.Status != store.StatusResolved {
			ref := RegressionRef{ID: r.ID, Kind: r.Kind, ChangedAt: r.ChangedAt, Ratio: r.Ratio, Status: r.Status}
			for _, s := range p.Steps {
				if s.Kind == r.Kind {
					ref.Basis = s.Estimate.Basis
					break
				}
			}
			p.Regressions = append(p.Regressions, ref)
		}
	}
	return p
}

// RegressionRef names an open or acknowledged regression of a series a
// plan restores through.
type RegressionRef struct {
	ID        int64      `json:"id"`
	Kind      store.Kind `json:"kind"`
	ChangedAt time.Time  `json:"changed_at"`
	Ratio     float64    `json:"ratio"`
	Status    string     `json:"status"`
	// Basis is the estimate of the plan's step of that kind: what it
	// rests on, given the regression.
	Basis string `json:"basis"`
}

// Sentence names the regression at the top of a plan: "Open regression
// 2: since 2026-10-16, full restores of DW_Sales on DWH-SQL02 run 2.4×
// slower than before; the full step's estimate rests on 47 full restores
// … since 2026-10-16".
func (r RegressionRef) Sentence(database, instance string) string {
	return fmt.Sprintf("%s regression %d: since %s, %s restores of %s on %s run %s than before; the %s step's estimate rests on %s",
		capital(r.Status), r.ID, day(r.ChangedAt), kindWord(r.Kind), database, instance, human.Change(r.Ratio), kindWord(r.Kind), r.Basis)
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// rateGroup is what a step's choice of rates depends on.
type rateGroup struct {
	kind store.Kind
	dev  string
}

// sized turns a group's rates into one backup's expected seconds.
func sized(e Estimate, bytes int64) Estimate {
	if e.N == 0 {
		return e
	}
	mib := float64(bytes) / (1 << 20)
	e.Seconds, e.LowS, e.HighS = mib/e.MiBps, mib/e.P90, mib/e.P10
	if e.Other != nil && e.Other.MiBps > 0 {
		o := *e.Other
		o.Seconds = mib / o.MiBps
		e.Other = &o
	}
	return e
}

// fastest returns the buffer settings of the target's fastest measured
// restore from a device kind that recorded them (trace flag 3213).
func fastest(rates []store.RestoreRate, target, dev string) (Buffers, bool) {
	var b Buffers
	ok := false
	for _, r := range rates {
		if !strings.EqualFold(r.Instance, target) || r.DeviceKind != dev || r.BufferCount <= 0 || r.MaxTransferKiB <= 0 {
			continue
		}
		if !ok || r.LogicalMiBps > b.MiBps {
			b = Buffers{DeviceKind: dev, BufferCount: r.BufferCount, MaxTransferKiB: r.MaxTransferKiB, MiBps: r.LogicalMiBps, At: r.At}
			ok = true
		}
	}
	return b, ok
}

// Quantile is the q-quantile of sorted values by linear interpolation
// between closest ranks.
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (sorted[hi]-sorted[lo])*(pos-float64(lo))
}

func deviceName(k string) string {
	switch k {
	case store.DeviceLocal:
		return "local disk"
	case store.DeviceUNC:
		return "a network share"
	case store.DeviceURL:
		return "URL"
	case store.DeviceVirtual:
		return "a virtual device"
	case store.DeviceTape:
		return "tape"
	}
	return "an unknown device"
}

func nullType(t int) sql.NullInt64 { return sql.NullInt64{Int64: int64(t), Valid: t != 0} }
