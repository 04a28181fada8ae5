package store

import "context"

// Sink receives records as a parser streams them, so a parser never holds a
// whole file in memory. The importer's Sink batches them into transactions.
// A Sink method returns an error only when the import cannot go on (the
// warehouse failed); a bad input line is a Reject, not an error.
type Sink interface {
	History(HistoryRow) error
	LogRestore(LogRestore) error
	Host(HostSnapshot) error
	// BackupSet receives one msdb backup set, or a piece of one (some of its
	// stripes or files): pieces of the same set (instance and uuid) merge.
	BackupSet(BackupSet) error
	Reject(Reject)
}

// Collect is a Sink that keeps everything in memory, for tests and small inputs.
type Collect struct {
	Histories   []HistoryRow
	LogRestores []LogRestore
	Hosts       []HostSnapshot
	BackupSets  []BackupSet
	Rejects     []Reject
}

// History implements Sink.
func (c *Collect) History(h HistoryRow) error { c.Histories = append(c.Histories, h); return nil }

// LogRestore implements Sink.
func (c *Collect) LogRestore(l LogRestore) error {
	c.LogRestores = append(c.LogRestores, l)
	return nil
}

// Host implements Sink.
func (c *Collect) Host(h HostSnapshot) error { c.Hosts = append(c.Hosts, h); return nil }

// BackupSet implements Sink.
func (c *Collect) BackupSet(b BackupSet) error { c.BackupSets = append(c.BackupSets, b); return nil }

// Reject implements Sink.
func (c *Collect) Reject(r Reject) { c.Rejects = append(c.Rejects, r) }

// CommitAndReconcile is Import.CommitAndReconcile on every engine: im
// commits, then w derives every instance marked dirty (not only im's; a
// failed import still derives what it committed) and counts what stays
// untimed among im's instances.
func CommitAndReconcile(ctx context.Context, im Import, w interface {
	Reconcile(ctx context.Context) error
	UntimedIn(ctx context.Context, instanceIDs []int64) (int64, error)
}) (ImportSummary, error) {
	sum, err := im.Commit()
	if rerr := w.Reconcile(ctx); err == nil {
		err = rerr
	}
	if err == nil {
		sum.Untimed, err = w.UntimedIn(ctx, sum.InstanceIDs)
	}
	return sum, err
}
