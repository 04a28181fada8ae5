package store

import (
	"fmt"
	"slices"
	"strings"
)

// AGMember is one instance's membership of an availability group
// database, as the warehouse records it, with the zone that recorded it
// ("" for this server's own imports and collector, else the collector that
// pushed the instance first).
type AGMember struct {
	Instance, Database, AG, Listener, GroupDB, Zone string
}

// ReplicasByAG decides BackupReplicas from availability-group membership,
// the same on every engine: out holds the name and database asked for,
// members every membership of the AGs that name could mean, isInstance
// whether name is an instance the warehouse holds, trust the AGs each
// collector's zone may join with others' (token create --ag). false means
// membership decides nothing: the engine falls back on family GUIDs.
func ReplicasByAG(name string, out Replicas, ms []AGMember, isInstance bool, trust map[string][]string) (Replicas, bool) {
	// The AG database named: the named instance's own membership; else (the
	// name is an AG's or a listener's) the claim of this server, or of the
	// one zone that makes it, or of the zones the operator trusts with it.
	var ag, groupDB string
	zone, found := "", false
	claimants := map[string]bool{}
	for _, m := range ms {
		if m.Database != out.Database {
			continue
		}
		if isInstance {
			if strings.EqualFold(m.Instance, name) {
				ag, groupDB, zone, found = m.AG, m.GroupDB, m.Zone, true
				break
			}
			continue
		}
		if strings.EqualFold(m.AG, name) || strings.EqualFold(m.Listener, name) {
			claimants[m.Zone] = true
			if !found || m.Zone == "" && zone != "" {
				ag, groupDB, zone, found = m.AG, m.GroupDB, m.Zone, true
			}
		}
	}
	if !isInstance && len(claimants) > 1 && zone != "" {
		// Several zones name it and none is this server: only if the
		// operator trusts every one of them with the AG is it one AG.
		for z := range claimants {
			if !trusted(trust, z, ag) {
				out.Via = fmt.Sprintf("%s is claimed by several zones (%s); give the operator's word with token create --ag to merge them",
					name, strings.Join(sortedZones(claimants), ", "))
				return out, true
			}
		}
	}
	if found {
		var insts []string
		words := map[string]bool{}
		for _, m := range ms {
			if !strings.EqualFold(m.AG, ag) {
				continue
			}
			if m.Zone != zone && !(trusted(trust, zone, ag) && trusted(trust, m.Zone, ag)) {
				continue // another zone's claim, without the operator's word
			}
			same := m.Database == out.Database
			if groupDB != "" && m.GroupDB != "" {
				same = m.GroupDB == groupDB // renamed on a replica, still the one AG database
			}
			if same && !slices.ContainsFunc(insts, func(s string) bool { return strings.EqualFold(s, m.Instance) }) {
				insts = append(insts, m.Instance)
				words[m.Zone] = true
			}
		}
		// The named instance first, if it is one of them.
		if i := slices.IndexFunc(insts, func(s string) bool { return strings.EqualFold(s, name) }); i > 0 {
			named := insts[i]
			insts = slices.Insert(slices.Delete(insts, i, i+1), 0, named)
		}
		out.Instances = insts
		out.Via = fmt.Sprintf("availability group %s (replicas %s), on the word of %s", ag, strings.Join(insts, ", "), wordOf(words))
		return out, true
	}
	return out, false
}

// ZoneWord words whose claim a merge rests on.
func ZoneWord(zone string) string {
	if zone == "" {
		return "this server's own imports and collector"
	}
	return "collector " + zone
}

// trusted reports whether zone's claims of membership in ag may join other
// zones': this server's own always, a collector's where its token names ag.
func trusted(trust map[string][]string, zone, ag string) bool {
	if zone == "" {
		return true
	}
	return slices.ContainsFunc(trust[strings.ToUpper(zone)], func(a string) bool { return strings.EqualFold(a, ag) })
}

func sortedZones(zs map[string]bool) []string {
	var out []string
	for z := range zs {
		out = append(out, ZoneWord(z))
	}
	slices.Sort(out)
	return out
}

func wordOf(zs map[string]bool) string {
	s := sortedZones(zs)
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1] + " (the operator's mapping)"
}
