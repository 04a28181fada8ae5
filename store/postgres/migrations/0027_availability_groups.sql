-- Availability groups (issue 27): an AG database's backups are taken on
-- whichever replica the backup preference names, so its history is spread
-- over several instances' msdb. ag_database records which database of
-- which instance is a replica of which AG database: from the collector
-- (sys.dm_hadr_database_replica_states, with the group_database_id that
-- identifies the AG database on every replica) or from an import that
-- names the AG (dbatools' AvailabilityGroupName, the export query's
-- availability_group). backup_set.family_guid (msdb's backupset.family_guid,
-- the database's identity since its creation) lets plans merge replicas'
-- histories where no membership was recorded.
ALTER TABLE backup_set ADD COLUMN family_guid TEXT NOT NULL DEFAULT '';

CREATE TABLE ag_database (
    instance_id       BIGINT NOT NULL REFERENCES instance (id) ON DELETE CASCADE,
    database_name     TEXT NOT NULL,
    ag_name           CITEXT NOT NULL,
    listener          CITEXT NOT NULL DEFAULT '', -- the listener's DNS name, '' = none known
    group_database_id TEXT NOT NULL DEFAULT '',                -- '' = the source did not say
    observed_utc      BIGINT NOT NULL,
    PRIMARY KEY (instance_id, database_name, ag_name)
);
CREATE INDEX ag_database_ag ON ag_database (ag_name);
-- A plan looks for the replicas of a database without membership by its
-- newest set's family GUID and recovery fork.
CREATE INDEX backup_set_family ON backup_set (family_guid, database_name, last_recovery_fork_guid, instance_id)
    WHERE family_guid <> '';
