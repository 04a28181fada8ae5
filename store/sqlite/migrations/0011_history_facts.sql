-- A history row keeps what its source stated in one JSON array, facts, in
-- the positions that historyFacts (store/histfacts.go) documents, instead of
-- 30 columns: modernc's SQLite spends most of a row's insert binding each
-- value, and a history CSV's rows are all written here before they are
-- derived into restores. Nothing filters on these values in SQL; the key
-- columns stay columns. The array stays readable in the sqlite3 shell
-- (facts ->> 0 is the destination database).
CREATE TABLE history_row_facts (
    id                 INTEGER PRIMARY KEY,
    instance_id        INTEGER NOT NULL REFERENCES instance (id) ON DELETE CASCADE,
    restore_history_id INTEGER NOT NULL,
    restore_local      INTEGER NOT NULL,
    facts              TEXT NOT NULL,
    origin             TEXT NOT NULL DEFAULT '',
    UNIQUE (instance_id, restore_history_id, restore_local)
);

INSERT INTO history_row_facts (id, instance_id, restore_history_id, restore_local, facts, origin)
SELECT id, instance_id, restore_history_id, restore_local,
       json_array(database_name, user_name, restore_type, replace_flag, recovery, stop_at_local, device_count,
                  backup_set_uuid, family_guid, source_server, source_machine, source_database, backup_type,
                  backup_start_local, backup_finish_local, first_lsn, last_lsn, backup_size, compressed_size,
                  software_major, software_minor, software_build, is_copy_only, has_checksums, key_algorithm,
                  media_families, device_type, json(devices), json(destination_files), source),
       origin
FROM history_row;

DROP TABLE history_row;
ALTER TABLE history_row_facts RENAME TO history_row;
