// Package plan builds restore plans: from a database's backup history, the
// chain of backups that brings it back to an instant (the newest usable
// full, the newest differential based on it, the unbroken log chain), the
// expected duration of each step from the restores the warehouse measured,
// and the T-SQL script. Like store/analysis it is pure: facts in, plan out.
//
// The chain follows Microsoft's documented rules (Back up and restore of SQL
// Server databases, "Log sequence numbers and restore planning",
// https://learn.microsoft.com/sql/relational-databases/backup-restore/ and
// the backupset reference): a log backup holds the LSNs [first_lsn,
// last_lsn); the first log applied after a data backup must hold that
// backup's last_lsn, each next one must start where the previous one ended;
// a differential is based on the full whose backup_set_uuid is its
// differential_base_guid (or, when the source lacks it, whose checkpoint_lsn
// is its differential_base_lsn / database_backup_lsn); a copy-only full can
// be restored but is never a differential base; a copy-only log does not
// break the chain (the next regular log starts where the previous regular
// one ended).
package plan

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Step is one RESTORE of the chain.
type Step struct {
	Kind    store.Kind      `json:"kind"` // full, diff or log
	Set     store.BackupSet `json:"backup_set"`
	Devices []string        `json:"devices"` // one per media family, in family order (mirror 0)
	// DeviceKind is store.DeviceLocal, DeviceUNC, DeviceURL, DeviceVirtual or DeviceTape.
	DeviceKind string `json:"device_kind"`
	// StopAt is set on the last log when the instant falls inside it.
	StopAt   *time.Time `json:"stop_at,omitempty"`
	Estimate Estimate   `json:"estimate"`
}

// Chain is the ordered restores that reach Reaches.
type Chain struct {
	Database string    `json:"database"`
	At       time.Time `json:"at"`      // the instant asked for; zero = latest
	Reaches  time.Time `json:"reaches"` // the instant the chain restores to
	Steps    []Step    `json:"steps"`
	// Notes say what the chain skipped and why (damaged or incomplete sets,
	// copy-only fulls, forks, a restore over the database).
	Notes []string `json:"notes"`
	// After is the restore over the database the chain begins after.
	After *Overwrite `json:"after_restore,omitempty"`
}

// GapError is a break in the log chain: no log backup holds the LSNs from
// FromLSN up to ToLSN (ToLSN empty when no later log exists at all).
type GapError struct {
	Database      string
	FromLSN       string
	ToLSN         string
	LastReachable time.Time
}

func (e *GapError) Error() string {
	to := e.ToLSN
	if to == "" {
		to = "…"
	}
	return fmt.Sprintf("the log chain of %s is broken: no log backup holds LSN %s to %s; the last instant that can be reached is %s",
		e.Database, e.FromLSN, to, e.LastReachable.UTC().Format("2006-01-02 15:04:05 UTC"))
}

// Overwrite is a restore over the database on an instance whose msdb
// recorded its backups: it replaced the database, so no backup taken before
// it can be chained with one taken after it, and none can reach an instant
// while it ran.
type Overwrite struct {
	RestoreID  int64     `json:"restore_id"`
	Start, End time.Time // UTC; End = Start when its end is unknown
}

// BuildAfter is Build for a database that restores replaced (overs, in any
// order): the chain of an instant after the last of them begins with the
// first full backup taken after it ends, and says so; an instant while one
// ran cannot be reached.
func BuildAfter(sets []store.BackupSet, database string, at time.Time, overs []Overwrite) (Chain, error) {
	var last *Overwrite
	for i := range overs {
		o := &overs[i]
		if (at.IsZero() || !o.Start.After(at)) && (last == nil || o.Start.After(last.Start)) {
			last = o
		}
	}
	if last == nil {
		return Build(sets, database, at)
	}
	if !at.IsZero() && at.Before(last.End) {
		return Chain{Database: database, At: at}, store.Errorf(store.EINVALID,
			"%s was being restored over from %s to %s (restore %d): no backup reaches an instant while a restore replaced the database; choose one before %s or after %s",
			database, stamp(last.Start), stamp(last.End), last.RestoreID, stamp(last.Start), stamp(last.End))
	}
	var after []store.BackupSet
	dropped := 0
	for _, s := range sets {
		if s.Start.Before(last.End.Truncate(time.Second)) {
			dropped++
			continue
		}
		after = append(after, s)
	}
	c, err := Build(after, database, at)
	if err != nil && len(c.Steps) == 0 {
		if store.ErrorCode(err) == store.EINVALID {
			return c, store.Errorf(store.EINVALID,
				"%s was restored over by restore %d, which ended %s, and no usable full backup has been taken since: the backups before it belong to the database it replaced; choose an instant before %s, or take a full backup",
				database, last.RestoreID, stamp(last.End), stamp(last.Start))
		}
		return c, err
	}
	if len(c.Steps) > 0 {
		first := c.Steps[0].Set
		note := fmt.Sprintf("%s was restored over by restore %d, which ended %s: the chain begins with the full backup of %s, the first usable one taken since",
			database, last.RestoreID, stamp(last.End), stamp(first.Finish))
		if dropped > 0 {
			note += "; the backups taken before it belong to the database it replaced"
		}
		c.Notes = append([]string{note}, c.Notes...)
		o := *last
		c.After = &o
	}
	return c, err
}

// Build chooses the chain that restores database to at (zero = the latest
// instant the history reaches). The sets are one database's history as one
// instance's msdb recorded it. A gap between the base and at is a *GapError;
// no usable full before at is a store EINVALID error.
func Build(sets []store.BackupSet, database string, at time.Time) (Chain, error) {
	c := Chain{Database: database, At: at}
	var fulls, diffs, logs []store.BackupSet
	for _, s := range sets {
		switch s.Type {
		case "D":
			fulls = append(fulls, s)
		case "I":
			diffs = append(diffs, s)
		case "L":
			logs = append(logs, s)
		}
	}
	newestFirst := func(x []store.BackupSet) {
		sort.SliceStable(x, func(i, j int) bool { return x[i].Finish.After(x[j].Finish) })
	}
	newestFirst(fulls)
	newestFirst(diffs)
	before := func(t time.Time) bool { return at.IsZero() || !t.After(at) }

	var full *store.BackupSet
	for i := range fulls {
		f := &fulls[i]
		if !before(f.Finish) {
			continue
		}
		if why := unusable(f); why != "" {
			c.Notes = append(c.Notes, fmt.Sprintf("full backup of %s skipped: %s", stamp(f.Finish), why))
			continue
		}
		full = f
		break
	}
	if full == nil {
		when := "in its history"
		if !at.IsZero() {
			when = "finished before " + stamp(at)
		}
		return c, store.Errorf(store.EINVALID, "%s has no usable full backup %s", database, when)
	}
	// The newest differential before the instant whose base is a usable
	// regular full wins when it is newer than the newest full (a copy-only
	// full taken after the last differential is the only way to be newer
	// and still have no differential of its own).
	var diff, diffBase *store.BackupSet
	for i := range diffs {
		d := &diffs[i]
		if !before(d.Finish) {
			continue
		}
		var b *store.BackupSet
		for j := range fulls {
			if f := &fulls[j]; !f.CopyOnly && f.Finish.Before(d.Finish) && basedOn(d, f) && unusable(f) == "" {
				b = f
				break
			}
		}
		if b == nil || !d.Finish.After(full.Finish) && b != full {
			continue
		}
		if why := unusable(d); why != "" {
			c.Notes = append(c.Notes, fmt.Sprintf("differential backup of %s skipped: %s", stamp(d.Finish), why))
			continue
		}
		diff, diffBase = d, b
		break
	}
	base := full
	if diff != nil {
		c.Steps = append(c.Steps, step(store.KindFull, *diffBase), step(store.KindDiff, *diff))
		base = diff
	} else {
		if full.CopyOnly {
			c.Notes = append(c.Notes, "the base is a copy-only full backup: no differential can be based on it, so the logs follow it directly")
		}
		c.Steps = append(c.Steps, step(store.KindFull, *full))
	}
	c.Reaches = base.Finish
	if n := endedBefore(logs, base); n > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("%d log %s taken while the %s backup that finished %s ran %s at or before its last LSN %s: "+
			"the %s backup holds that log already, so the chain does not use %s",
			n, plural(n, "backup", "backups"), setWord(base), stamp(base.Finish), plural(n, "ends", "end"), base.LastLSN,
			setWord(base), plural(n, "it", "them")))
	}
	if err := c.addLogs(logs, base, at); err != nil {
		return c, err
	}
	c.Notes = append(c.Notes, forkNotes(sets, c.Steps)...)
	return c, nil
}

// addLogs appends the unbroken log chain from base's last_lsn to at.
func (c *Chain) addLogs(logs []store.BackupSet, base *store.BackupSet, at time.Time) error {
	if !at.IsZero() && !at.After(base.Finish) {
		return nil
	}
	cur, fork, reached := base.LastLSN, base.LastForkGUID, base.Finish
	for {
		var regular, copies, unproven []*store.BackupSet
		for i := range logs {
			l := &logs[i]
			if Cmp(l.FirstLSN, cur) > 0 || Cmp(l.LastLSN, cur) <= 0 || l.Damaged || !complete(l) {
				continue
			}
			if fork != "" && l.FirstForkGUID != "" && !strings.EqualFold(fork, l.FirstForkGUID) {
				continue // a log of another recovery fork
			}
			if fork != "" && l.FirstForkGUID == "" && l.LastForkGUID != "" && !strings.EqualFold(fork, l.LastForkGUID) {
				// The layout gives only the fork the log ends on (dbatools'
				// -Raw export): it may cross from this fork into a new one,
				// or belong to another branch. Never crossed unproven.
				unproven = append(unproven, l)
				continue
			}
			if l.CopyOnly {
				copies = append(copies, l)
			} else {
				regular = append(regular, l)
			}
		}
		next := pick(regular, at)
		if next == nil {
			next = pick(copies, at)
		}
		if next == nil && len(unproven) > 0 {
			l := unproven[0]
			c.Notes = append(c.Notes, fmt.Sprintf("the plan stops at %s, before the log backup that finished %s (LSN %s to %s): it ends on recovery fork %s, "+
				"and this history does not say which fork it starts on (dbatools' -Raw export has only last_recovery_fork_guid), so it cannot be proven to continue "+
				"this chain's fork %s; import the msdb export (backup_history_export.sql) of the instance that took it to decide",
				stamp(reached), stamp(l.Finish), l.FirstLSN, l.LastLSN, l.LastForkGUID, fork))
			c.Reaches = reached
			return nil
		}
		if next == nil {
			break
		}
		s := step(store.KindLog, *next)
		cur, reached = next.LastLSN, next.Finish
		if next.LastForkGUID != "" {
			fork = next.LastForkGUID
		}
		if !at.IsZero() && !at.After(next.Finish) {
			if at.Before(next.Finish) {
				t := at
				s.StopAt = &t
				if next.BulkLogged {
					c.Notes = append(c.Notes, "the last log backup holds bulk-logged changes: SQL Server refuses STOPAT inside it; restore it whole or stop at the log before")
				}
			}
			c.Steps = append(c.Steps, s)
			c.Reaches = at
			return nil
		}
		c.Steps = append(c.Steps, s)
		c.Reaches = reached
	}
	// No log continues the chain. Any later log (or an instant after the
	// last log) is out of reach: name the gap.
	var after string
	for _, l := range logs {
		if Cmp(l.FirstLSN, cur) > 0 && (fork == "" || l.FirstForkGUID == "" || strings.EqualFold(fork, l.FirstForkGUID)) &&
			(after == "" || Cmp(l.FirstLSN, after) < 0) {
			after = l.FirstLSN
		}
	}
	if after != "" {
		return &GapError{Database: c.Database, FromLSN: cur, ToLSN: after, LastReachable: reached}
	}
	if !at.IsZero() && at.After(reached) {
		// As dbatools' Restore-DbaDatabase does: to the end of the chain.
		c.Notes = append(c.Notes, fmt.Sprintf("%s is later than the last log backup: the plan restores to the end of the chain, %s; "+
			"whatever happened after it is not in any backup", stamp(at), stamp(reached)))
		c.Reaches = reached
	}
	return nil
}

// endedBefore counts the log backups that finished after base but end at
// or before its last LSN: taken while the data backup ran, they hold
// nothing the chain needs (their database_backup_lsn is often the running
// full's checkpoint, after their own last LSN).
func endedBefore(logs []store.BackupSet, base *store.BackupSet) int {
	n := 0
	for _, l := range logs {
		if l.Finish.After(base.Start) && Cmp(l.LastLSN, base.LastLSN) <= 0 && !l.CopyOnly {
			n++
		}
	}
	return n
}

func setWord(s *store.BackupSet) string {
	if s.Type == "I" {
		return "differential"
	}
	return "full"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// pick chooses among the logs that continue the chain. Two regular logs
// hold the same LSN only when a restore WITH RECOVERY forked the database:
// the log that crosses into the new fork is taken when it was backed up no
// later than the instant (the restore that forked happened before it),
// else the old branch's log; for "latest", the newest branch.
func pick(c []*store.BackupSet, at time.Time) *store.BackupSet {
	var best *store.BackupSet
	for _, l := range c {
		crosses := l.FirstForkGUID != "" && l.LastForkGUID != "" && !strings.EqualFold(l.FirstForkGUID, l.LastForkGUID)
		if crosses && !at.IsZero() && l.Start.After(at) {
			continue
		}
		if best == nil || l.Finish.After(best.Finish) {
			best = l
		}
	}
	if best == nil && len(c) > 0 {
		best = c[0]
	}
	return best
}

func step(k store.Kind, s store.BackupSet) Step {
	var devs []string
	var typ int
	media := append([]store.BackupMedia(nil), s.Media...)
	sort.SliceStable(media, func(i, j int) bool { return media[i].Family < media[j].Family })
	for _, m := range media {
		if m.Mirror == 0 {
			devs = append(devs, m.Device)
			typ = m.DeviceType
		}
	}
	var dt = store.DeviceKindOf(devs, "", nullType(typ))
	return Step{Kind: k, Set: s, Devices: devs, DeviceKind: dt}
}

// unusable says why a data backup cannot start or continue a chain.
func unusable(s *store.BackupSet) string {
	switch {
	case s.Damaged:
		return "msdb marks it damaged (is_damaged)"
	case len(s.Media) == 0:
		return "msdb lists none of its backup files"
	case !complete(s):
		return fmt.Sprintf("a striped set of %d files with only %d of them listed", s.Families, families(s))
	}
	return ""
}

// complete reports whether every stripe (family_sequence_number 1..n) of
// the set has a device.
func complete(s *store.BackupSet) bool {
	if s.Families <= 0 {
		return len(s.Media) > 0
	}
	return families(s) == s.Families
}

func families(s *store.BackupSet) int {
	seen := map[int]bool{}
	for _, m := range s.Media {
		if m.Family >= 1 && m.Family <= max(s.Families, 1) {
			seen[m.Family] = true
		}
	}
	return len(seen)
}

// basedOn reports whether differential d is based on full f.
func basedOn(d, f *store.BackupSet) bool {
	if d.DiffBaseGUID != "" && f.UUID != "" {
		return strings.EqualFold(d.DiffBaseGUID, f.UUID)
	}
	if d.DiffBaseLSN != "" && f.CheckpointLSN != "" {
		return d.DiffBaseLSN == f.CheckpointLSN
	}
	return d.DatabaseBackupLSN != "" && d.DatabaseBackupLSN == f.CheckpointLSN
}

// forkNotes names the recovery forks the chain crosses, and the forks of
// the history it does not follow.
func forkNotes(sets []store.BackupSet, steps []Step) []string {
	var out []string
	in := map[string]bool{}
	for _, s := range steps {
		in[s.Set.UUID] = true
		if s.Set.FirstForkGUID != "" && s.Set.LastForkGUID != "" && !strings.EqualFold(s.Set.FirstForkGUID, s.Set.LastForkGUID) {
			out = append(out, fmt.Sprintf("the chain crosses a recovery fork at LSN %s (a restore WITH RECOVERY): it follows fork %s",
				s.Set.ForkPointLSN, s.Set.LastForkGUID))
		}
	}
	// Regular log backups taken inside the chain's span, past its data
	// backups' last LSN, but not in it belong to a recovery fork the chain
	// leaves.
	var base *store.BackupSet
	for i := range steps {
		if steps[i].Kind != store.KindLog {
			base = &steps[i].Set
		}
	}
	var last time.Time
	if len(steps) > 0 {
		last = steps[len(steps)-1].Set.Finish
	}
	other := 0
	for _, s := range sets {
		if base != nil && s.Type == "L" && !s.CopyOnly && !in[s.UUID] && s.Finish.After(base.Finish) && !s.Finish.After(last) &&
			Cmp(s.LastLSN, base.LastLSN) > 0 {
			other++
		}
	}
	switch {
	case other == 1:
		out = append(out, "1 log backup taken within the chain's span is not part of it (another recovery fork)")
	case other > 1:
		out = append(out, fmt.Sprintf("%d log backups taken within the chain's span are not part of it (another recovery fork)", other))
	}
	return out
}

// Cmp compares two canonical numeric LSNs (store.CompareLSN).
func Cmp(a, b string) int { return store.CompareLSN(a, b) }

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }
