-- The live collector's own records: one run per instance and pass (the
-- /collector page), the watermark of each source, and the progress curves of
-- restores seen in flight (the /live and restore pages). Instances are named,
-- not referenced: a run is recorded for an instance that never answered and
-- so has no row in instance.

CREATE TABLE collector_run (
    id       INTEGER PRIMARY KEY,
    instance TEXT NOT NULL COLLATE NOCASE,
    started  INTEGER NOT NULL,               -- UTC ms, the collector's clock
    finished INTEGER,                        -- NULL while running
    status   TEXT NOT NULL,                  -- running | ok | partial | failed | timeout | canceled
    rows     TEXT NOT NULL DEFAULT '{}',     -- {"history": 12, "errorlog": 3, ...}
    errors   TEXT NOT NULL DEFAULT '{}',     -- {"errorlog": "...", "host/modules": "..."}, secrets scrubbed
    notes    TEXT NOT NULL DEFAULT '[]'      -- events: msdb rebuilt, archives abandoned, ...
);
CREATE INDEX collector_run_instance ON collector_run (instance, id);

CREATE TABLE watermark (
    instance   TEXT NOT NULL COLLATE NOCASE,
    source     TEXT NOT NULL,                -- history | errorlog | agent
    value      TEXT NOT NULL,                -- the source's own JSON
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (instance, source)
);

-- One row per restore statement seen running, keyed as the server knows it:
-- instance, database, session and start_time. Times *_local are the
-- instance's wall clock, *_utc real instants (from the sampled offset).
CREATE TABLE inflight_restore (
    id              INTEGER PRIMARY KEY,
    instance        TEXT NOT NULL COLLATE NOCASE,
    database_name   TEXT NOT NULL,
    session_id      INTEGER NOT NULL,
    start_local     INTEGER NOT NULL,
    start_utc       INTEGER NOT NULL,
    utc_offset      INTEGER NOT NULL,
    command         TEXT NOT NULL,
    statement       TEXT NOT NULL DEFAULT '',     -- backup passwords redacted
    last_seen_utc   INTEGER NOT NULL,
    ended           INTEGER NOT NULL DEFAULT 0,   -- 1 once a sample no longer saw it
    UNIQUE (instance, database_name, start_local, session_id)
);
CREATE INDEX inflight_restore_seen ON inflight_restore (last_seen_utc);

CREATE TABLE inflight_sample (
    restore_id       INTEGER NOT NULL REFERENCES inflight_restore (id) ON DELETE CASCADE,
    sampled_local    INTEGER NOT NULL,
    percent          REAL NOT NULL,
    est_remaining_ms INTEGER,
    wait_type        TEXT,
    PRIMARY KEY (restore_id, sampled_local)
) WITHOUT ROWID;
