-- Retention rolls log restores older than [retention] restores_days up per
-- day (issue 41; SCALE.md, "Retention and roll-up of old log restores"):
-- one row per instance, database, UTC day, restoring build and source
-- server, instead of ~96 raw log restores. Full, differential, file and
-- page restores are never rolled up, nor any restore a regression, a watch
-- or a series' baseline cites (store.Retention).
CREATE TABLE restore_rollup (
    instance_id      INTEGER NOT NULL REFERENCES instance (id) ON DELETE CASCADE,
    database_name    TEXT NOT NULL,
    day              INTEGER NOT NULL,           -- UTC day: at_utc / 86,400,000
    instance_build   TEXT NOT NULL DEFAULT '',
    source_server    TEXT NOT NULL DEFAULT '',
    restores         INTEGER NOT NULL,
    measured         INTEGER NOT NULL,           -- restores with a duration
    total_duration_s REAL NOT NULL DEFAULT 0,
    max_duration_s   REAL,
    total_bytes      INTEGER NOT NULL DEFAULT 0,
    p50_duration_s   REAL,
    p95_duration_s   REAL,
    p50_mibps        REAL,
    p95_mibps        REAL,
    first_lsn        TEXT,                       -- of the day's first restore, from its error-log line
    last_lsn         TEXT,                       -- of the day's last restore
    first_utc        INTEGER NOT NULL,
    last_utc         INTEGER NOT NULL,
    merged           INTEGER NOT NULL DEFAULT 0, -- 1 once a later prune added restores: the percentiles are then count-weighted means
    PRIMARY KEY (instance_id, database_name, day, instance_build, source_server)
);
