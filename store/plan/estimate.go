package plan

import (
	"database/sql"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Estimate is a step's expected duration from measured restores.
type Estimate struct {
	// Seconds is the size over the median logical throughput; LowS and
	// HighS use the 90th and 10th percentiles (the fast and slow ends).
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
	Instance       string `json:"instance"` // where the history comes from
	TargetInstance string `json:"target_instance"`
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
}

// Estimates fills each step's expected duration from rates (the target
// instance's measured restores, and the fleet's), the buffer settings of
// the target's fastest restores, the total against rto and the dominant
// part.
func Estimates(c Chain, instance, target string, rates []store.RestoreRate, rto time.Duration) Plan {
	p := Plan{Instance: instance, TargetInstance: target, Chain: c, RTO: rto, Buffers: map[string]Buffers{}}
	p.Steps = append([]Step(nil), c.Steps...)
	mine := func(r store.RestoreRate) bool { return strings.EqualFold(r.Instance, target) }
	// The rates of one kind from one device kind are the same for every
	// step of that kind (80 logs, one set of rates): judged once.
	memo := map[rateGroup]Estimate{}
	for i := range p.Steps {
		s := &p.Steps[i]
		g := rateGroup{s.Kind, s.DeviceKind}
		rate, ok := memo[g]
		if !ok {
			rate = estimate(s, target, rates, mine)
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
		if _, ok := p.Buffers[s.DeviceKind]; !ok {
			if b, ok := fastest(rates, target, s.DeviceKind); ok {
				p.Buffers[s.DeviceKind] = b
			}
		}
	}
	p.OverRTO = rto > 0 && p.TotalS > rto.Seconds()
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
	return p
}

// estimate picks the most specific measurements there are: the target's
// restores of the step's kind from its device kind, else the fleet's, else
// the target's of that kind from any device, else the fleet's.
func estimate(s *Step, target string, rates []store.RestoreRate, mine func(store.RestoreRate) bool) Estimate {
	kindName := map[store.Kind]string{store.KindFull: "full", store.KindDiff: "differential", store.KindLog: "log"}[s.Kind]
	dev := s.DeviceKind
	tries := []struct {
		own, anyDevice bool
		basis          string
	}{
		{true, false, fmt.Sprintf("measured on %s (%s restores from %s)", target, kindName, deviceName(dev))},
		{false, false, fmt.Sprintf("estimated from other instances (%s restores from %s)", kindName, deviceName(dev))},
		{true, true, fmt.Sprintf("measured on %s (%s restores from any device)", target, kindName)},
		{false, true, fmt.Sprintf("estimated from other instances (%s restores from any device)", kindName)},
	}
	for _, t := range tries {
		var v []float64
		for _, r := range rates {
			if r.Kind == s.Kind && mine(r) == t.own && (t.anyDevice || r.DeviceKind == dev) && r.LogicalMiBps > 0 {
				v = append(v, r.LogicalMiBps)
			}
		}
		if len(v) == 0 {
			continue
		}
		sort.Float64s(v)
		return Estimate{MiBps: Quantile(v, 0.5), P10: Quantile(v, 0.1), P90: Quantile(v, 0.9), N: len(v), Basis: t.basis, Fleet: !t.own}
	}
	return Estimate{Basis: fmt.Sprintf("no measured %s restores anywhere in the warehouse", kindName)}
}

// rateGroup is what estimate's choice of rates depends on.
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
