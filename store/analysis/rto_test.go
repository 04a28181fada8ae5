package analysis_test

import (
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store/analysis"
)

func TestProjectRTO(t *testing.T) {
	const gib = int64(1) << 30
	for _, tc := range []struct {
		name   string
		in     analysis.RTOInput
		want   time.Duration
		atRisk bool
	}{
		// (100 + 10 + 2) GiB = 114,688 MiB at 128 MiB/s = 896 s.
		{"full+diff+log within 1 h", analysis.RTOInput{FullBytes: 100 * gib, DiffBytes: 10 * gib, LogBytes: 2 * gib, MiBps: 128, Target: time.Hour}, 896 * time.Second, false},
		{"same over 10 min", analysis.RTOInput{FullBytes: 100 * gib, DiffBytes: 10 * gib, LogBytes: 2 * gib, MiBps: 128, Target: 10 * time.Minute}, 896 * time.Second, true},
		{"no target", analysis.RTOInput{FullBytes: 100 * gib, MiBps: 1}, 102400 * time.Second, false},
		{"exactly on target is not at risk", analysis.RTOInput{FullBytes: 60 * gib, MiBps: 1024, Target: time.Minute}, time.Minute, false},
		{"unknown throughput", analysis.RTOInput{FullBytes: 100 * gib, Target: time.Minute}, 0, false},
	} {
		got, risk := analysis.ProjectRTO(tc.in)
		if got != tc.want || risk != tc.atRisk {
			t.Errorf("%s: got %v, %v; want %v, %v", tc.name, got, risk, tc.want, tc.atRisk)
		}
	}
}

func TestRestoreDateSemantics(t *testing.T) {
	start := time.Date(2025, 3, 1, 1, 0, 0, 0, time.UTC)
	at := func(i int, offset time.Duration) analysis.DateSample {
		s := start.Add(time.Duration(i) * 24 * time.Hour)
		return analysis.DateSample{RestoreDate: s.Add(offset), Start: s, End: s.Add(40 * time.Minute)}
	}
	var atStart, atEnd, mixed []analysis.DateSample
	for i := range 5 {
		atStart = append(atStart, at(i, 2*time.Second))          // restore_date ≈ start
		atEnd = append(atEnd, at(i, 40*time.Minute-time.Second)) // ≈ end
	}
	mixed = append(append(mixed, atStart[:3]...), atEnd[:2]...) // 60 % agreement
	for _, tc := range []struct {
		name    string
		samples []analysis.DateSample
		verdict string
		n       int
	}{
		{"start", atStart, analysis.RestoreDateStart, 5},
		{"end", atEnd, analysis.RestoreDateEnd, 5},
		{"two samples are too few", atEnd[:2], analysis.RestoreDateUnknown, 2},
		{"60 % is no verdict", mixed, analysis.RestoreDateUnknown, 5},
		{"4 of 5 is 80 %", append(append([]analysis.DateSample{}, atEnd[:4]...), atStart[0]), analysis.RestoreDateEnd, 5},
		{"zero-length and broken samples do not vote", append([]analysis.DateSample{
			{RestoreDate: start, Start: start, End: start},
			{RestoreDate: start, Start: start.Add(time.Hour), End: start},
			{Start: start, End: start.Add(time.Hour)},
		}, atStart[:3]...), analysis.RestoreDateStart, 3},
	} {
		v, n := analysis.RestoreDateSemantics(tc.samples)
		if v != tc.verdict || n != tc.n {
			t.Errorf("%s: got %s, %d; want %s, %d", tc.name, v, n, tc.verdict, tc.n)
		}
	}
}
