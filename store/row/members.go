package row

import (
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// MemberKey names one database's membership of an availability group on
// one instance (the ag_database row's key).
type MemberKey struct {
	Instance     int64
	Database, AG string
}

// Member is what a batch learnt of a membership: the listener and group
// database id ("" = not said) and when it was last seen (UTC ms).
type Member struct {
	Listener, GroupDB string
	At                int64
}

// Members gathers the availability-group memberships an import batch's
// backup sets and host snapshots name, for the engine to record once per
// database when the batch commits.
type Members map[MemberKey]*Member

// add returns the membership k, seen at at, and what to fill in.
func (ms Members) add(k MemberKey, at int64, listener, groupDB string) {
	m := ms[k]
	if m == nil {
		m = &Member{}
		ms[k] = m
	}
	m.At = max(m.At, at)
	if l := strings.TrimSpace(listener); l != "" {
		m.Listener = l
	}
	if g := strings.ToUpper(strings.Trim(groupDB, "{} ")); g != "" {
		m.GroupDB = g
	}
}

// BackupSet notes the membership backup set b of instance id names, if
// any (an import knows the AG's name, rarely its group database id).
func (ms Members) BackupSet(id int64, b *store.BackupSet) {
	if ag := strings.TrimSpace(b.AvailabilityGroup); ag != "" {
		ms.add(MemberKey{id, b.Database, ag}, b.Finish.UnixMilli(), b.AGListener, b.GroupDatabaseID)
	}
}

// Snapshot takes a host snapshot that read instance id's availability
// groups as the instance's whole membership: what it lists is noted, and
// what the batch noted before it is dropped. It returns the snapshot's
// instant (UTC ms): the engine deletes the instance's memberships recorded
// before it (a database removed from its AG, a replica evicted); a later
// record (an import of newer backups) is kept.
func (ms Members) Snapshot(id int64, h *store.HostSnapshot) (at int64) {
	t := h.ObservedAt
	if h.UTCOffset != nil {
		t = t.Add(-time.Duration(*h.UTCOffset) * time.Minute)
	}
	at = t.UnixMilli()
	for k, m := range ms {
		if k.Instance == id && m.At < at {
			delete(ms, k)
		}
	}
	for _, g := range h.AvailabilityGroups {
		if g.Distributed || strings.TrimSpace(g.AG) == "" || g.Database == "" {
			continue
		}
		ms.add(MemberKey{id, g.Database, strings.TrimSpace(g.AG)}, at, g.Listener, g.GroupDatabaseID)
	}
	return at
}
