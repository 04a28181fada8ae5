-- log_restore's dedupe key is unique per instance (issue 16): the key is a
-- hash that includes the instance's id, so (instance_id, dedupe_key) is as
-- unique as the key alone, but its index keeps each instance's keys
-- together. Unique on the key alone, the index put every new line of an
-- error log on a random page of an index of all the fleet's lines: at 10 M
-- restores the inserts of a day's 10,000 ERRORLOGs were 10 s of their 25 s,
-- most of it reading those pages. The table is rebuilt (SQLite cannot drop
-- a column's UNIQUE), keeping every id: restores cite log lines by id. The
-- indexes are built after the rows are copied, one sort each.
CREATE TABLE log_restore_by_instance (
    id              INTEGER PRIMARY KEY,
    instance_id     INTEGER NOT NULL REFERENCES instance (id) ON DELETE CASCADE,
    dedupe_key      TEXT NOT NULL,
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

INSERT INTO log_restore_by_instance (id, instance_id, dedupe_key, source, database_name, kind, message_id,
    completed_local, utc_offset, first_lsn, last_lsn, device_count, device_type, devices, has_3014, statement,
    pages, seconds, mbps, upper_bound_s, buffer, phases, recovery, origin)
SELECT id, instance_id, dedupe_key, source, database_name, kind, message_id,
    completed_local, utc_offset, first_lsn, last_lsn, device_count, device_type, devices, has_3014, statement,
    pages, seconds, mbps, upper_bound_s, buffer, phases, recovery, origin
FROM log_restore;

DROP TABLE log_restore;
ALTER TABLE log_restore_by_instance RENAME TO log_restore;
CREATE UNIQUE INDEX log_restore_key ON log_restore (instance_id, dedupe_key);
CREATE INDEX log_restore_instance ON log_restore (instance_id, database_name);
CREATE INDEX log_restore_time ON log_restore (instance_id, completed_local);
