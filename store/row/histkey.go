package row

import (
	"hash/fnv"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/derive"
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

// HistoryKey returns the restore_history_id column of h: its own id, or the
// synthetic one when the source gave none.
func HistoryKey(h *store.HistoryRow) int64 {
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
	write(derive.BackupIdentity(h.FirstLSN, h.LastLSN, h.BackupSetUUID, h.Devices))
	if h.StopAt != nil && !h.StopAt.IsZero() {
		// Seconds: culture renderings of one export drop the milliseconds.
		write(h.StopAt.Truncate(time.Second).Format(time.DateTime))
	}
	return -int64(f.Sum64()>>2) - 1
}
