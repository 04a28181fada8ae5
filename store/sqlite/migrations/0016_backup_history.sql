-- Backup history (msdb backupset, backupmediafamily, backupfile) for restore
-- plans. One backup_set row per set and instance whose msdb recorded it,
-- keyed by backup_set_uuid so a re-import adds nothing; its media families
-- (stripes, and mirrors) and the database files it holds hang off it. LSNs
-- are numeric(25,0) as canonical decimal text, as everywhere in the
-- warehouse; times are real instants (UTC milliseconds).
CREATE TABLE backup_set (
    id                       INTEGER PRIMARY KEY,
    instance_id              INTEGER NOT NULL REFERENCES instance (id) ON DELETE CASCADE,
    database_name            TEXT NOT NULL,
    backup_set_uuid          TEXT NOT NULL,
    media_set_id             INTEGER,
    family_count             INTEGER NOT NULL DEFAULT 0,  -- media_family_count: stripes; 0 = unknown
    type                     TEXT NOT NULL,               -- D, I, L, F, G, P, Q
    is_copy_only             INTEGER NOT NULL DEFAULT 0,
    is_damaged               INTEGER NOT NULL DEFAULT 0,
    has_backup_checksums     INTEGER NOT NULL DEFAULT 0,
    has_bulk_logged_data     INTEGER NOT NULL DEFAULT 0,
    first_lsn                TEXT NOT NULL,
    last_lsn                 TEXT NOT NULL,
    checkpoint_lsn           TEXT NOT NULL DEFAULT '',
    database_backup_lsn      TEXT NOT NULL DEFAULT '',
    differential_base_lsn    TEXT NOT NULL DEFAULT '',
    differential_base_guid   TEXT NOT NULL DEFAULT '',
    fork_point_lsn           TEXT NOT NULL DEFAULT '',
    first_recovery_fork_guid TEXT NOT NULL DEFAULT '',
    last_recovery_fork_guid  TEXT NOT NULL DEFAULT '',
    start_utc                INTEGER NOT NULL,
    finish_utc               INTEGER NOT NULL,
    utc_offset               INTEGER,                     -- minutes, from backupset.time_zone; NULL = unknown
    backup_size              INTEGER,
    compressed_backup_size   INTEGER,
    software_build           TEXT NOT NULL DEFAULT '',
    server_name              TEXT NOT NULL DEFAULT '',
    machine_name             TEXT NOT NULL DEFAULT '',
    recovery_model           TEXT NOT NULL DEFAULT '',
    origin                   TEXT NOT NULL DEFAULT '',
    UNIQUE (instance_id, backup_set_uuid)
);
CREATE INDEX backup_set_database ON backup_set (instance_id, database_name, finish_utc);

CREATE TABLE backup_media (
    backup_set_id          INTEGER NOT NULL REFERENCES backup_set (id) ON DELETE CASCADE,
    family_sequence_number INTEGER NOT NULL,
    mirror                 INTEGER NOT NULL DEFAULT 0,
    device_type            INTEGER,                      -- 2 disk, 5 tape, 7 virtual device, 9 URL
    physical_device_name   TEXT NOT NULL,
    PRIMARY KEY (backup_set_id, family_sequence_number, mirror)
);

CREATE TABLE backup_file (
    backup_set_id INTEGER NOT NULL REFERENCES backup_set (id) ON DELETE CASCADE,
    logical_name  TEXT NOT NULL,
    physical_name TEXT NOT NULL,
    file_type     TEXT NOT NULL,                         -- D data, L log, F full-text catalog / filestream
    file_size     INTEGER,
    filegroup     TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (backup_set_id, logical_name)
);
