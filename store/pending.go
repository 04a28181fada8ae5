package store

// An import commits its facts, then derives the restores, rebuilds the
// indexes a large derivation dropped and analyses what changed, each step
// in transactions of its own. A crash (kill -9, power) between them leaves
// a warehouse whose counts are right but whose findings, or indexes, are
// not; re-running the import adds nothing new and so, before these marks,
// repaired nothing. Every step's need is therefore recorded in the
// transaction that creates it and cleared in the one that meets it:
//
//   - instance.dirty: facts not yet derived (the import batch);
//   - setting dropped_restore_indexes: indexes to build again (the drop);
//   - instance.analysis_pending: restores not yet analysed (the
//     derivation; cleared by SaveFindings);
//   - setting derivation_version: restores derived by older rules.
//
// CompletePending, which every command runs right after opening the
// warehouse (serve included), meets them all before anything is read.

// PendingWork is what an interrupted run left for the next open to finish.
type PendingWork struct {
	Derive     int  // instances whose facts wait for derivation
	Analyse    int  // instances whose restores wait for analysis
	Indexes    int  // restore indexes a bulk derivation left dropped
	Derivation bool // restores derived by another version of the rules
}

// Any says whether anything is pending.
func (p PendingWork) Any() bool {
	return p.Derive > 0 || p.Analyse > 0 || p.Indexes > 0 || p.Derivation
}
