package row

import (
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

// Normalise puts the names of a record in the warehouse's form.
func Normalise(rec any) {
	switch r := rec.(type) {
	case *store.HistoryRow:
		r.Instance, r.Database = store.InstanceName(r.Instance), store.DatabaseName(r.Database)
		r.SourceServer, r.SourceMachine = store.InstanceName(r.SourceServer), store.InstanceName(r.SourceMachine)
		r.SourceDatabase = store.DatabaseName(r.SourceDatabase)
	case *store.LogRestore:
		r.Instance, r.Database = store.InstanceName(r.Instance), store.DatabaseName(r.Database)
	case *store.HostSnapshot:
		r.Instance = store.InstanceName(r.Instance)
	case *store.BackupSet:
		r.Instance, r.Database = store.InstanceName(r.Instance), store.DatabaseName(r.Database)
		r.UUID = strings.ToUpper(strings.Trim(strings.TrimSpace(r.UUID), "{}"))
	}
}
