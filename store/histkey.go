package store

import (
	"hash/fnv"
	"slices"
	"strings"
	"time"
)

// A history row is stored once per (instance, restore_history_id,
// restore_local): re-importing a file adds nothing. An export without
// restore_history_id (dbatools' Get-DbaDbRestoreHistory has none) would key
// every row of an instance on its restore time alone, and two restores of
// different databases started in the same second would collapse into one.
// Such a row is keyed instead on a synthetic id made from what identifies
// the restore in msdb: its destination database, restore type, backup set
// (first and last LSN, else backup_set_uuid, else the devices read) and
// STOPAT. Synthetic ids are negative, so they never meet msdb's, which
// start at 1.

// historyKey returns the restore_history_id column of h: its own id, or the
// synthetic one when the source gave none.
func historyKey(h *HistoryRow) int64 {
	if h.RestoreHistoryID != 0 {
		return h.RestoreHistoryID
	}
	f := fnv.New64a()
	write := func(s string) {
		f.Write([]byte(s))
		f.Write([]byte{0})
	}
	write(strings.ToLower(h.Database))
	write(strings.ToUpper(strings.TrimSpace(h.RestoreType)))
	write(backupIdentity(h.FirstLSN, h.LastLSN, h.BackupSetUUID, h.Devices))
	if h.StopAt != nil && !h.StopAt.IsZero() {
		// Seconds: culture renderings of one export drop the milliseconds.
		write(h.StopAt.Truncate(time.Second).Format(time.DateTime))
	}
	return -int64(f.Sum64()>>2) - 1
}

// backupIdentity names the backup set a restore read, for telling one
// restore from another when msdb's restore_history_id is missing: both LSNs
// when the source has them (every history export does), else the backup set's
// GUID, else its devices, compared as Windows compares paths.
func backupIdentity(first, last, uuid string, devices []string) string {
	switch {
	case first != "" && last != "":
		return "lsn:" + first + "/" + last
	case uuid != "":
		return "uuid:" + strings.ToLower(uuid)
	}
	return "dev:" + deviceSetKey(devices)
}

// deviceSetKey is a device list as a set: trimmed, lower-cased, sorted.
func deviceSetKey(devices []string) string {
	ds := make([]string, 0, len(devices))
	for _, d := range devices {
		if d = strings.ToLower(strings.TrimSpace(d)); d != "" {
			ds = append(ds, d)
		}
	}
	slices.Sort(ds)
	return strings.Join(ds, "\x00")
}
