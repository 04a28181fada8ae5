package analysis

import (
	"fmt"
	"math"
	"strings"

	"github.com/restorewatch/restorewatch/store/human"
)

// The notes are read by managers as much as by DBAs: one sentence, plain
// numbers, the date of the change, no statistical jargon beyond the
// p-value the evidence report explains.

func noteNotEnough(have, need int) string {
	return fmt.Sprintf("not enough data: %d %s with a known throughput (needs %d)", have, plural(have, "restore"), need)
}

func noteChange(f Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "restores became %s (throughput %s → %s) %s; %d %s since, %d before; one-sided rank test %s",
		human.Change(f.Ratio), human.MiBps(f.BaselineMiBps), human.MiBps(f.CurrentMiBps), since(f),
		f.CurrentN, plural(f.CurrentN, "restore"), f.BaselineN, human.P(f.PValue))
	if f.SizeGrowth >= 1.2 || (f.SizeGrowth > 0 && f.SizeGrowth <= 1/1.2) {
		fmt.Fprintf(&b, "; the backup size also changed %s", times(f.SizeGrowth))
	}
	if f.Confirmed {
		fmt.Fprintf(&b, "; %d restores in a row beyond every recent one", f.CurrentN)
	}
	b.WriteString(outlierClause(f.Outliers))
	return b.String()
}

// SizeExplains reports whether a change of backup size explains a change
// of duration: both known and within 1.25× of each other. The analysis'
// notes and the evidence page judge alike with it.
func SizeExplains(sizeGrowth, durationRatio float64) bool {
	return sizeGrowth > 0 && durationRatio > 0 && math.Abs(math.Log(durationRatio/sizeGrowth)) < math.Log(1.25)
}

func noteDuration(f Finding) string {
	var b strings.Builder
	verb := "grew"
	if f.DurationRatio < 1 {
		verb = "fell"
	}
	explained := SizeExplains(f.SizeGrowth, f.DurationRatio)
	switch {
	case explained && f.SizeGrowth > 1:
		fmt.Fprintf(&b, "duration grew %s %s because the backup is %s larger; throughput %s (%s), not a regression",
			times(f.DurationRatio), since(f), times(f.SizeGrowth), held(f.Ratio), times(f.Ratio))
	case explained:
		fmt.Fprintf(&b, "duration fell to %s %s because the backup is %s smaller; throughput %s (%s)",
			times(f.DurationRatio), since(f), times(1/f.SizeGrowth), held(f.Ratio), times(f.Ratio))
	default:
		fmt.Fprintf(&b, "duration %s %s %s while throughput moved only %s, within the thresholds",
			verb, times(f.DurationRatio), since(f), times(f.Ratio))
	}
	b.WriteString(outlierClause(f.Outliers))
	return b.String()
}

func noteStable(f Finding) string {
	return fmt.Sprintf("stable: %d restores at a median %s MiB/s, no lasting change%s",
		f.BaselineN, mib(f.BaselineMiBps), outlierClause(f.Outliers))
}

func held(ratio float64) string {
	if ratio >= 0.9 && ratio <= 1/0.9 {
		return "unchanged"
	}
	return "within the thresholds"
}

func since(f Finding) string {
	if f.ChangedAt.IsZero() {
		return fmt.Sprintf("from restore #%d", f.ChangeIndex+1)
	}
	return "from " + human.Date(f.ChangedAt)
}

func outlierClause(out []int) string {
	switch len(out) {
	case 0:
		return ""
	case 1:
		return "; 1 outlier shown apart"
	}
	return fmt.Sprintf("; %d outliers shown apart", len(out))
}

func times(r float64) string {
	if r >= 10 {
		return fmt.Sprintf("%.0f×", r)
	}
	if r >= 1.95 {
		return fmt.Sprintf("%.1f×", r)
	}
	return fmt.Sprintf("%.2f×", r)
}

func mib(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
