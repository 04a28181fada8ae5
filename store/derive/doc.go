// Package derive turns one instance's raw facts (msdb history rows, log
// records, host snapshots) into its restores: which records describe one
// restore, when it ran in UTC, how long it took and how much it moved, and
// what the instance looked like then. It is pure: facts in, restores out,
// no database, so a rule is tested on a slice of facts. The words it speaks
// (Kind, Source, Restore and their constants) are store's.
package derive
