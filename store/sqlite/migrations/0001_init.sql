-- The warehouse: raw facts as each source stated them (history_row,
-- log_restore, host_snapshot) and the restores derived from them by
-- reconciliation. Times are INTEGER milliseconds since the Unix epoch; columns
-- named *_local hold the instance's wall-clock reading (as if it were UTC),
-- columns named *_utc real instants.

CREATE TABLE instance (
    id                     INTEGER PRIMARY KEY,
    name                   TEXT NOT NULL UNIQUE COLLATE NOCASE,
    default_utc_offset     INTEGER,              -- minutes, set by the user when no source states it
    restore_date_semantics TEXT NOT NULL DEFAULT 'unknown',  -- start | end | unknown (measured)
    semantics_samples      INTEGER NOT NULL DEFAULT 0,
    tags                   TEXT NOT NULL DEFAULT '{}',
    dirty                  INTEGER NOT NULL DEFAULT 0,        -- raw facts changed since the last reconcile
    created_at             INTEGER NOT NULL
);

CREATE TABLE history_row (
    id                 INTEGER PRIMARY KEY,
    instance_id        INTEGER NOT NULL REFERENCES instance (id) ON DELETE CASCADE,
    restore_history_id INTEGER NOT NULL,
    restore_local      INTEGER NOT NULL,
    database_name      TEXT NOT NULL,
    user_name          TEXT,
    restore_type       TEXT,
    replace_flag       INTEGER,
    recovery           INTEGER,
    stop_at_local      INTEGER,
    device_count       INTEGER,
    backup_set_uuid    TEXT,
    family_guid        TEXT,
    source_server      TEXT,
    source_machine     TEXT,
    source_database    TEXT,
    backup_type        TEXT,
    backup_start_local INTEGER,
    backup_finish_local INTEGER,
    first_lsn          TEXT,
    last_lsn           TEXT,
    backup_size        INTEGER,
    compressed_size    INTEGER,
    software_major     INTEGER,
    software_minor     INTEGER,
    software_build     INTEGER,
    is_copy_only       INTEGER,
    has_checksums      INTEGER,
    key_algorithm      TEXT,
    media_families     INTEGER,
    device_type        INTEGER,
    devices            TEXT NOT NULL DEFAULT '[]',
    source             TEXT NOT NULL,
    origin             TEXT NOT NULL DEFAULT '',
    UNIQUE (instance_id, restore_history_id, restore_local)
);
CREATE INDEX history_row_match ON history_row (instance_id, database_name, first_lsn, last_lsn);

CREATE TABLE log_restore (
    id              INTEGER PRIMARY KEY,
    instance_id     INTEGER NOT NULL REFERENCES instance (id) ON DELETE CASCADE,
    dedupe_key      TEXT NOT NULL UNIQUE,
    source          TEXT NOT NULL,
    database_name   TEXT NOT NULL,
    kind            TEXT NOT NULL,
    message_id      INTEGER NOT NULL DEFAULT 0,
    completed_local INTEGER,
    utc_offset      INTEGER,
    first_lsn       TEXT,
    last_lsn        TEXT,
    device_count    INTEGER,
    device_type     TEXT,
    devices         TEXT NOT NULL DEFAULT '[]',
    has_3014        INTEGER NOT NULL DEFAULT 0,
    statement       TEXT,
    pages           INTEGER,
    seconds         REAL,
    mbps            REAL,
    upper_bound_s   REAL,
    buffer          TEXT,
    phases          TEXT,
    recovery        TEXT,
    origin          TEXT NOT NULL DEFAULT ''
);
CREATE INDEX log_restore_instance ON log_restore (instance_id, database_name);

CREATE TABLE host_snapshot (
    id             INTEGER PRIMARY KEY,
    instance_id    INTEGER NOT NULL REFERENCES instance (id) ON DELETE CASCADE,
    observed_local INTEGER NOT NULL,
    utc_offset     INTEGER,
    source         TEXT NOT NULL,
    content_hash   TEXT NOT NULL,
    version        TEXT,
    level          TEXT,
    update_level   TEXT,
    update_ref     TEXT,
    edition        TEXT,
    os             TEXT,
    hypervisor     INTEGER,
    manufacturer   TEXT,
    model          TEXT,
    sockets        INTEGER,
    cores          INTEGER,
    memory_mb      INTEGER,
    ifi            INTEGER,
    trace_flags    TEXT NOT NULL DEFAULT '[]',
    modules        TEXT NOT NULL DEFAULT '[]',
    extra          TEXT NOT NULL DEFAULT '{}',
    origin         TEXT NOT NULL DEFAULT '',
    UNIQUE (instance_id, observed_local, source)
);

-- restore is derived: rebuilt for an instance from the three tables above.
-- natural_key keeps a restore's id stable across reconciliations: the
-- history_row id it derives from, or minus the log_restore id when no history
-- row describes it. content_hash lets reconciliation skip unchanged rows.
CREATE TABLE restore (
    id               INTEGER PRIMARY KEY,
    instance_id      INTEGER NOT NULL REFERENCES instance (id) ON DELETE CASCADE,
    natural_key      INTEGER NOT NULL UNIQUE,
    content_hash     INTEGER NOT NULL,
    history_id       INTEGER,
    log_id           INTEGER,
    extra_log_id     INTEGER,
    database_name    TEXT NOT NULL,
    kind             TEXT NOT NULL,
    at_utc           INTEGER NOT NULL,       -- finish when known, else start, else restore_date
    started_utc      INTEGER,
    finished_utc     INTEGER,
    started_local    INTEGER,
    finished_local   INTEGER,
    restore_date_local INTEGER,
    offset_known     INTEGER NOT NULL DEFAULT 0,
    duration_s       REAL,
    duration_source  TEXT NOT NULL,
    backup_bytes     INTEGER,
    compressed_bytes INTEGER,
    pages            INTEGER,
    size_source      TEXT NOT NULL DEFAULT '',
    logical_mibps    REAL,
    read_mibps       REAL,
    engine_mbps      REAL,
    instance_build   TEXT,
    source_server    TEXT,
    source_database  TEXT,
    source_build     TEXT,
    family           TEXT,
    compressed       INTEGER,
    encrypted        INTEGER,
    checksum         INTEGER,
    copy_only        INTEGER,
    devices          TEXT NOT NULL DEFAULT '[]',
    device_kind      TEXT,
    stripes          INTEGER,
    buffer_count     INTEGER,
    max_transfer_kib INTEGER,
    io_alignment     INTEGER,
    ifi              INTEGER,
    cpu_count        INTEGER,
    memory_mb        INTEGER,
    trace_flags      TEXT,
    modules          TEXT,
    user_name        TEXT,
    sources          TEXT NOT NULL
);
CREATE INDEX restore_series ON restore (instance_id, database_name, kind, at_utc);
CREATE INDEX restore_at ON restore (at_utc);

CREATE TABLE import_run (
    id          INTEGER PRIMARY KEY,
    source      TEXT NOT NULL,
    file        TEXT NOT NULL,
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    read        INTEGER NOT NULL DEFAULT 0,
    added       INTEGER NOT NULL DEFAULT 0,
    duplicates  INTEGER NOT NULL DEFAULT 0,
    rejected    INTEGER NOT NULL DEFAULT 0,
    error       TEXT
);
