// Package analysis holds the statistics of restorewatch: it decides
// whether a series of restores got slower, since when, and what changed at
// that moment; it groups restores by build, projects restore times against
// RTO targets, and matches builds against known engine issues. Everything
// here is a pure function over slices; the store feeds it and keeps its
// findings.
//
// # The method
//
// This is how restorewatch decides that a database's restores got slower.
// It is written to be read by the people who act on the answer.
//
// What is judged. A series is the restores of one database on one instance
// of one kind (full, differential, log), in time order. Each restore is
// judged on its throughput, MiB of backup restored per second, not on its
// duration: a database that doubled in size takes twice as long at the
// same speed, and that is growth, not a regression. Restores whose
// throughput is unknown are left out.
//
// Enough data. A verdict needs at least 2 × MinEach restores with a known
// throughput (6 by default); with fewer the answer is "not enough data".
//
// Working on ratios. Throughputs are compared as ratios (0.5× is as far
// from 1× as 2× is), so the arithmetic is done on their logarithms.
//
// Outliers. A restore that is much slower or faster than the restores on
// both sides of it, while those neighbours agree with each other, is an
// outlier: shown on the page, left out of every figure. "Much" means both
// beyond the regression thresholds (0.67× or 1.5×) and beyond 3.5 times
// the series' usual restore-to-restore noise, measured without the
// suspect. A burst of up to MinEach − 1 such restores in a row (two, by
// default) is treated the same way, so one or two slow nights never make a
// regression on their own; the third in a row does.
//
// Finding the moment of change. The remaining restores are split into
// stretches of steady throughput by binary segmentation: the split that
// best explains the series as two levels is kept if it explains it by
// more than a penalty, and each side is searched again. Each stretch must
// hold at least MinEach restores. The penalty grows with the noise of the
// series and with its length (4 · ln n · σ², σ being the typical
// restore-to-restore noise), chosen by simulation so that a stable series
// with ±25 % noise is split in about 5 % of cases, before any of the
// checks below.
//
// Keeping only real changes. Each proposed change is checked: the median
// throughput after it must be at most 0.67× (Ratio) or at least 1.5×
// (ImproveRatio) the median before it, and a Mann–Whitney rank test must
// find the after-restores slower (or faster) than the before-restores at
// the 5 % level (Alpha). The rank test compares orderings rather than
// averages, so one extreme value cannot sway it; it is exact for the small
// samples regressions are found on. A change that fails is merged into its
// neighbours and the others are checked again, so a slide in small steps
// still adds up to one change.
//
// The verdict. The most recent change that passes defines the current
// level: "regression" when it is slower, "improvement" when it is faster.
// Baseline and current figures are the medians of the stretch before and
// the stretch after it; the change is dated at the first restore after it.
// A bootstrap (1,000 resamples, fixed seed) gives a 95 % interval for the
// ratio of the two medians. With no such change the series is "stable";
// if its duration nonetheless changed lastingly, the finding says so and
// shows whether the backup size explains it.
//
// What changed. For the restores before and after the change, every
// recorded factor (instance build, source build, compression, I/O
// alignment, …) whose usual value differs is listed, ranked by how cleanly
// it separates the two groups: the share of before-restores with the
// before value times the share of after-restores with the after value.
// A factor that flipped exactly at the change scores 1.
//
// How well it works. detect_sim_test.go simulates series with known
// answers and measures the method; run `go test -v -run Rate
// ./store/analysis/` to see the rates. On stable series of 8–40 restores
// with ±25 % noise it flagged none of 500; drops to 0.33× are found in
// nearly all series once 5 slower restores have happened, and the change
// is dated to the exact restore in nearly all of those.
//
// Limits. Throughput is logical (backup size over duration), so two
// restores of equal size but different compression are compared at face
// value. A gradual decline without a clear step is found only once it has
// added up to the thresholds. Known issues are matched on build and
// conditions only; they say "this may be why", not "this is why".
package analysis
