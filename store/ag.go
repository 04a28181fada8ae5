package store

// AGMembership is one database of an instance that is a replica of an
// availability group database, as the collector reads it from
// sys.dm_hadr_database_replica_states: GroupDatabaseID identifies the AG
// database on every replica. The collector tags the database's backup
// sets with it (BackupSet.AvailabilityGroup …), and an import records
// it: pushed from another zone, it travels with them.
type AGMembership struct {
	Database        string `json:"database"`
	AG              string `json:"availability_group"`
	Listener        string `json:"listener"`
	GroupDatabaseID string `json:"group_database_id"`
}

// Replicas is where one database's backup history lives: the instances
// whose msdb recorded its backups (Instances, the named one first when the
// name was an instance), the database's name as stored, and how they were
// found to be one database (Via; "" when it is one instance's history).
type Replicas struct {
	Instances []string `json:"instances"`
	Database  string   `json:"database"`
	Via       string   `json:"via,omitempty"`
}
