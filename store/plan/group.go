package plan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/human"
)

// Group is a run of a plan's steps shown as one line: a full or a
// differential alone, consecutive log restores together, so that a plan of
// 82 steps reads as three lines ("78 log restores from 04:00 to 23:45")
// on a page, in a terminal and on paper, with the steps one by one a click
// (or --wide) away.
type Group struct {
	Kind store.Kind
	// First and Last are the indices of the group's first and last step
	// in Plan.Steps.
	First, Last int
	// Seconds is the sum of the steps' expected durations (unmeasured
	// steps count nothing); Unestimated is how many had no estimate.
	Seconds     float64
	Unestimated int
	Size        int64
	// From and To are when the first and last backups of the group finished.
	From, To time.Time
}

// Len is the number of steps in the group.
func (g Group) Len() int { return g.Last - g.First + 1 }

// Label names the group in words: "full backup", "differential backup",
// "78 log restores from 04:00 to 23:45" (UTC; dates shown when the run
// spans days).
func (g Group) Label() string {
	if g.Kind != store.KindLog {
		return kindWord(g.Kind) + " backup"
	}
	if g.Len() == 1 {
		return "1 log restore, backup finished " + g.To.UTC().Format("2006-01-02 15:04")
	}
	from, to := g.From.UTC(), g.To.UTC()
	layout := "15:04"
	if from.Format(time.DateOnly) != to.Format(time.DateOnly) {
		layout = "2006-01-02 15:04"
	}
	return fmt.Sprintf("%s log restores from %s to %s", human.Count(int64(g.Len())), from.Format(layout), to.Format(layout))
}

// Day is the UTC date of a log run within one day ("2026-11-30 UTC"), or
// "UTC" when the label already gives dates.
func (g Group) Day() string {
	if from := g.From.UTC().Format(time.DateOnly); from == g.To.UTC().Format(time.DateOnly) {
		return from + " UTC"
	}
	return "UTC"
}

// Groups folds a plan's steps into groups: each data backup alone, each run
// of consecutive log backups as one.
func Groups(steps []Step) []Group {
	var gs []Group
	for i, s := range steps {
		if s.Kind != store.KindLog || len(gs) == 0 || gs[len(gs)-1].Kind != store.KindLog {
			gs = append(gs, Group{Kind: s.Kind, First: i, From: s.Set.Finish})
		}
		g := &gs[len(gs)-1]
		g.Last, g.To = i, s.Set.Finish
		g.Size += s.Set.Size
		if s.Estimate.Seconds > 0 {
			g.Seconds += s.Estimate.Seconds
		} else {
			g.Unestimated++
		}
	}
	return gs
}

// writeSteps writes one line per step.
func writeSteps(b *strings.Builder, p Plan) {
	b.WriteString("\n  #  kind  finished                 size        expected   range              basis\n")
	for i := range p.Steps {
		writeStep(b, p, i)
	}
}

// writeCompactStep writes one step in the terminal's width: the figures
// in a row, what the estimate rests on below it.
func writeCompactStep(b *strings.Builder, p Plan, i int) {
	s := p.Steps[i]
	rng := ""
	if s.Estimate.N > 0 {
		rng = Duration(s.Estimate.LowS) + " – " + Duration(s.Estimate.HighS)
	}
	fmt.Fprintf(b, "%3d  %-4s  %s  %10s  %9s  %s\n", i+1, s.Kind, s.Set.Finish.UTC().Format("2006-01-02 15:04"), bytes(s.Set.Size),
		Duration(s.Estimate.Seconds), rng)
	basis := fmt.Sprintf("%s (n=%s)", s.Estimate.Basis, human.Count(int64(s.Estimate.N)))
	if s.StopAt != nil {
		basis += "; STOPAT " + stamp(*s.StopAt)
	}
	if len(p.Replicas) > 1 {
		basis += "; taken on " + comment(s.Set.Instance)
	}
	fmt.Fprintf(b, "       %s\n", basis)
}

func writeStep(b *strings.Builder, p Plan, i int) {
	s := p.Steps[i]
	rng := ""
	if s.Estimate.N > 0 {
		rng = Duration(s.Estimate.LowS) + " – " + Duration(s.Estimate.HighS)
	}
	stop := ""
	if s.StopAt != nil {
		stop = " STOPAT " + stamp(*s.StopAt)
	}
	if len(p.Replicas) > 1 {
		stop += "; taken on " + comment(s.Set.Instance)
	}
	fmt.Fprintf(b, "%3d  %-4s  %s  %10s  %9s  %-17s  %s, n=%s%s\n", i+1, s.Kind, stamp(s.Set.Finish), bytes(s.Set.Size),
		Duration(s.Estimate.Seconds), rng, s.Estimate.Basis, human.Count(int64(s.Estimate.N)), stop)
}

// writeGroups writes a data backup's step in a row that fits 80 columns,
// its basis on the line below, and a run of log restores as one line:
// steps, when, size and expected duration summed.
func writeGroups(b *strings.Builder, p Plan) {
	steps := p.Steps
	b.WriteString("\n  #  kind  finished (UTC)          size   expected  range\n")
	for _, g := range Groups(steps) {
		if g.Kind != store.KindLog || g.Len() == 1 {
			for i := g.First; i <= g.Last; i++ {
				writeCompactStep(b, p, i)
			}
			continue
		}
		fmt.Fprintf(b, "%3d–%d %s (%s), %s, expected %s", g.First+1, g.Last+1, g.Label(), g.Day(), bytes(g.Size), Duration(g.Seconds))
		if g.Unestimated > 0 {
			fmt.Fprintf(b, " plus %s with no measurement", human.Count(int64(g.Unestimated)))
		}
		if last := steps[g.Last]; last.StopAt != nil {
			fmt.Fprintf(b, "; the last STOPAT %s", stamp(*last.StopAt))
		}
		if len(p.Replicas) > 1 {
			fmt.Fprintf(b, "; taken on %s", strings.Join(groupReplicas(steps[g.First:g.Last+1]), ", "))
		}
		b.WriteString(" (--wide: one by one)\n")
	}
}

// groupReplicas names the replicas that took a run's backups, in order of
// first appearance.
func groupReplicas(steps []Step) []string {
	var out []string
	for _, s := range steps {
		if n := comment(s.Set.Instance); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
