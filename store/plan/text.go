package plan

import (
	"fmt"
	"strings"
)

// Text writes the plan for a terminal: one line per full and differential
// step and one per run of log restores ("78 log restores from 04:00 to
// 23:45"), with expected durations, the total against the RTO target and
// what dominates.
func Text(p Plan) string { return text(p, false) }

// TextWide is Text with every step on its own line.
func TextWide(p Plan) string { return text(p, true) }

func text(p Plan, wide bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Restore plan for %s (history of %s), restoring on %s\n", comment(p.Database), comment(p.Instance), comment(p.TargetInstance))
	if p.At.IsZero() {
		fmt.Fprintf(&b, "Target: latest, %s\n", stamp(p.Reaches))
	} else if p.Reaches.Before(p.At) {
		fmt.Fprintf(&b, "Target: %s, after the last log backup: to the end of the chain, %s\n", stamp(p.At), stamp(p.Reaches))
	} else {
		fmt.Fprintf(&b, "Target: %s\n", stamp(p.At))
	}
	for _, r := range p.Regressions {
		fmt.Fprintf(&b, "%s.\n", r.Sentence(p.Database, p.TargetInstance))
	}
	if wide {
		writeSteps(&b, p)
	} else {
		writeGroups(&b, p)
	}
	fmt.Fprintf(&b, "\nTotal: %s", Duration(p.TotalS))
	if p.LowS > 0 {
		fmt.Fprintf(&b, " (%s – %s)", Duration(p.LowS), Duration(p.HighS))
	}
	if p.Unestimated > 0 {
		fmt.Fprintf(&b, " plus %d steps with no measurement", p.Unestimated)
	}
	if p.RTO > 0 {
		verdict := "within"
		if p.OverRTO {
			verdict = "OVER"
		}
		fmt.Fprintf(&b, "; RTO target %s: %s", Duration(p.RTO.Seconds()), verdict)
	}
	b.WriteString("\n")
	if p.Dominant != "" {
		fmt.Fprintf(&b, "Dominant: %s (%.0f %% of the time)\n", p.Dominant, 100*p.DominantShare)
	}
	for _, c := range p.Calibration {
		fmt.Fprintf(&b, "Calibration: %s.\n", c.Sentence())
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "Note: %s\n", comment(n))
	}
	return b.String()
}
