package plan

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

// ProveByLSN merges into reps the candidates (store.Replicas.Candidates:
// instances with backups of a database of the same name, when the history
// names no availability group and no family GUID) whose backups continue
// the chain of the instances already in it, and only those: a log backup
// of one holds the last LSN of a backup of the other (first_lsn <= that
// LSN < last_lsn) on the same recovery fork, which only the same
// database's log can; a history without recovery-fork GUIDs proves nothing. A merged candidate's sets can prove
// the next one (a full and differential on one replica, the logs on
// another). known are the sets of reps.Instances already read; sets reads
// a candidate's (Source.BackupSets: its fulls and differentials, and the
// logs that can follow what is known). Via says how the replicas were
// joined; Candidates is emptied.
func ProveByLSN(ctx context.Context, reps store.Replicas, known []store.BackupSet,
	sets func(ctx context.Context, instance string) ([]store.BackupSet, error)) (store.Replicas, error) {
	if len(reps.Candidates) == 0 {
		return reps, nil
	}
	cands := reps.Candidates
	reps.Candidates = nil
	known = slices.Clone(known)
	if len(known) == 0 {
		return reps, nil
	}
	theirs := map[string][]store.BackupSet{}
	for _, c := range cands {
		s, err := sets(ctx, c)
		if err != nil {
			return reps, err
		}
		theirs[c] = s
	}
	var proofs []string
	for merged := true; merged; {
		merged = false
		for _, c := range cands {
			if slices.ContainsFunc(reps.Instances, func(s string) bool { return strings.EqualFold(s, c) }) {
				continue
			}
			if why := continues(known, theirs[c]); why != "" {
				reps.Instances = append(reps.Instances, c)
				known = append(known, theirs[c]...)
				proofs = append(proofs, why)
				merged = true
			}
		}
	}
	if len(proofs) > 0 {
		reps.Via = fmt.Sprintf("LSN continuity across %s (the history names no availability group and no family GUID): %s",
			strings.Join(reps.Instances, ", "), strings.Join(proofs, "; "))
	}
	return reps, nil
}

// continues says how b's backups continue a's or a's continue b's, "" when
// none does: a log backup of one side holds the last LSN of a backup of the
// other side, on the same recovery fork where both name theirs.
func continues(a, b []store.BackupSet) string {
	if why := logHolds(b, a); why != "" {
		return why
	}
	return logHolds(a, b)
}

// logHolds finds a log backup in logs that holds the last LSN of a backup
// in ends, and words it.
func logHolds(logs, ends []store.BackupSet) string {
	type end struct {
		lsn string
		s   *store.BackupSet
	}
	var es []end
	for i := range ends {
		if ends[i].LastLSN != "" {
			es = append(es, end{ends[i].LastLSN, &ends[i]})
		}
	}
	sort.Slice(es, func(i, j int) bool { return Cmp(es[i].lsn, es[j].lsn) < 0 })
	for i := range logs {
		l := &logs[i]
		if l.Type != "L" || l.FirstLSN == "" || l.LastLSN == "" {
			continue
		}
		// The ends in [first_lsn, last_lsn).
		k := sort.Search(len(es), func(j int) bool { return Cmp(es[j].lsn, l.FirstLSN) >= 0 })
		for ; k < len(es) && Cmp(es[k].lsn, l.LastLSN) < 0; k++ {
			e := es[k].s
			// A log names the fork it starts on (msdb export) or only the
			// one it ends on (dbatools' -Raw): it must be the fork the
			// other backup ends on. Two databases' LSNs can overlap by
			// chance (each counts from its own creation); their recovery
			// forks cannot, so a side that names no fork proves nothing.
			fork := l.FirstForkGUID
			if fork == "" {
				fork = l.LastForkGUID
			}
			if e.LastForkGUID == "" || fork == "" || !strings.EqualFold(e.LastForkGUID, fork) {
				continue
			}
			if strings.EqualFold(e.Instance, l.Instance) {
				continue
			}
			return fmt.Sprintf("the log backup %s took (finished %s, LSN %s to %s) holds the last LSN %s of the %s backup %s took (finished %s)",
				l.Instance, stamp(l.Finish), l.FirstLSN, l.LastLSN, e.LastLSN, typeWord(e.Type), e.Instance, stamp(e.Finish))
		}
	}
	return ""
}

func typeWord(t string) string {
	switch t {
	case "D":
		return "full"
	case "I":
		return "differential"
	case "L":
		return "log"
	}
	return "data"
}
