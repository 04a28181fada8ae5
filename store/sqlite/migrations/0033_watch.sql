-- Watches (issue 37): a series whose newest restore lies beyond its usual
-- (a slow or fast outlier) is watched from that restore on. The next
-- restore confirms it (a second one beyond: a regression dated to the
-- first) or closes it (back to usual). Closed and confirmed watches are
-- kept as history: a one-off slow restore stays a closed watch, never a
-- regression.
CREATE TABLE watch (
    id             INTEGER PRIMARY KEY,
    instance_id    INTEGER NOT NULL REFERENCES instance (id) ON DELETE CASCADE,
    database_name  TEXT NOT NULL,
    kind           TEXT NOT NULL,
    direction      TEXT NOT NULL,              -- regression (slower) | improvement (faster)
    restore_id     INTEGER NOT NULL,           -- the restore that opened it
    opened_at      INTEGER NOT NULL,           -- that restore's end (UTC ms)
    ratio          REAL NOT NULL,              -- its throughput over the usual median
    duration_ratio REAL NOT NULL DEFAULT 0,    -- its duration over the usual median duration (0 = unknown)
    usual_mibps    REAL NOT NULL,
    usual_n        INTEGER NOT NULL DEFAULT 0,
    state          TEXT NOT NULL DEFAULT 'open', -- open | closed | confirmed
    closed_at      INTEGER,                    -- UTC ms, when the analysis closed or confirmed it
    closed_note    TEXT NOT NULL DEFAULT '',
    first_seen     INTEGER NOT NULL,           -- UTC ms, when the analysis opened it
    UNIQUE (instance_id, database_name, kind, restore_id)
);
CREATE INDEX watch_open ON watch (instance_id) WHERE state = 'open';
