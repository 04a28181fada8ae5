package analysis

import (
	"math"
	"time"
)

// RTOInput is what a restore of a database today would have to read: its
// latest full backup, the differential on top of it and the log backups
// since, and the throughput its restores recently achieved.
type RTOInput struct {
	FullBytes, DiffBytes, LogBytes int64
	MiBps                          float64       // recent median logical throughput of the database's restores
	Target                         time.Duration // RTO; <= 0 = none set
}

// ProjectRTO returns the expected wall time of restoring FullBytes +
// DiffBytes + LogBytes at MiBps, and whether it exceeds Target. It is a
// projection from logical size and one throughput: log replay, recovery
// and file initialisation (with IFI off) usually run slower than a full's
// data copy, so a database near its target deserves a test restore. With
// no known throughput it returns 0, false: "unknown" is not "at risk", and
// the page says why the figure is missing.
func ProjectRTO(in RTOInput) (expected time.Duration, atRisk bool) {
	if in.MiBps <= 0 || math.IsInf(in.MiBps, 0) || math.IsNaN(in.MiBps) {
		return 0, false
	}
	bytes := float64(max(in.FullBytes, 0)) + float64(max(in.DiffBytes, 0)) + float64(max(in.LogBytes, 0))
	secs := bytes / (1 << 20) / in.MiBps
	if secs >= math.MaxInt64/float64(time.Second) {
		expected = time.Duration(math.MaxInt64)
	} else {
		expected = time.Duration(math.Round(secs * float64(time.Second)))
	}
	return expected, in.Target > 0 && expected > in.Target
}

// DateSample is one restore seen both in msdb and in the error log:
// restorehistory.restore_date and the statement's start and end (the end
// from the completion line, the start from end minus the 3014 seconds).
// All three must be on the same clock.
type DateSample struct {
	RestoreDate, Start, End time.Time
}

// Verdicts of RestoreDateSemantics.
const (
	RestoreDateStart   = "start"
	RestoreDateEnd     = "end"
	RestoreDateUnknown = "unknown"
)

// RestoreDateSemantics measures, per SPEC §4, whether an instance's
// restore_date records when restores start or when they end: each sample
// votes for the end it is closer to, and the verdict needs at least 3
// votes with at least 80 % agreeing. Samples with a zero time, an end
// before the start, or a restore_date equally close to both (a restore of
// under a second cannot tell) do not vote. n is the number of votes.
func RestoreDateSemantics(samples []DateSample) (verdict string, n int) {
	start, end := 0, 0
	for _, s := range samples {
		if s.RestoreDate.IsZero() || s.Start.IsZero() || s.End.IsZero() || s.End.Before(s.Start) {
			continue
		}
		dStart := s.RestoreDate.Sub(s.Start).Abs()
		dEnd := s.RestoreDate.Sub(s.End).Abs()
		switch {
		case dStart < dEnd:
			start++
		case dEnd < dStart:
			end++
		}
	}
	n = start + end
	switch {
	case n < 3:
		return RestoreDateUnknown, n
	case start*5 >= n*4:
		return RestoreDateStart, n
	case end*5 >= n*4:
		return RestoreDateEnd, n
	}
	return RestoreDateUnknown, n
}
