package derive

import (
	"slices"
	"strings"
)

// BackupIdentity names the backup set a restore read, for telling one
// restore from another when msdb's restore_history_id is missing: both LSNs
// when the source has them (every history export does), else the backup set's
// GUID, else its devices, compared as Windows compares paths.
func BackupIdentity(first, last, uuid string, devices []string) string {
	switch {
	case first != "" && last != "":
		return "lsn:" + first + "/" + last
	case uuid != "":
		return "uuid:" + strings.ToLower(uuid)
	}
	return "dev:" + DeviceSetKey(devices)
}

// DeviceSetKey is a device list as a set: trimmed, lower-cased, sorted.
func DeviceSetKey(devices []string) string {
	ds := make([]string, 0, len(devices))
	for _, d := range devices {
		if d = strings.ToLower(strings.TrimSpace(d)); d != "" {
			ds = append(ds, d)
		}
	}
	slices.Sort(ds)
	return strings.Join(ds, "\x00")
}
