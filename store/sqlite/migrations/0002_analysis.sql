-- Findings of the regression engine (store/analysis), recomputed per series
-- after each import and from scratch by `restorewatch analyze`.

CREATE TABLE series (
    id             INTEGER PRIMARY KEY,
    instance_id    INTEGER NOT NULL REFERENCES instance (id) ON DELETE CASCADE,
    database_name  TEXT NOT NULL,
    kind           TEXT NOT NULL,
    family         TEXT,
    n              INTEGER NOT NULL,
    n_measured     INTEGER NOT NULL,
    verdict        TEXT NOT NULL,            -- regression | improvement | stable | not_enough_data
    baseline_mibps REAL,                     -- median before the change (whole series when stable)
    current_mibps  REAL,
    last_at        INTEGER,
    last_bytes     INTEGER,
    outliers       TEXT NOT NULL DEFAULT '[]',  -- restore ids
    change_points  TEXT NOT NULL DEFAULT '[]',  -- restore ids of the first restore after each located change
    note           TEXT NOT NULL DEFAULT '',
    UNIQUE (instance_id, database_name, kind)
);

CREATE TABLE regression (
    id                 INTEGER PRIMARY KEY,
    instance_id        INTEGER NOT NULL REFERENCES instance (id) ON DELETE CASCADE,
    database_name      TEXT NOT NULL,
    kind               TEXT NOT NULL,
    direction          TEXT NOT NULL,        -- regression | improvement
    changed_at         INTEGER NOT NULL,     -- UTC ms of the first slow restore
    change_restore_id  INTEGER,
    baseline_mibps     REAL NOT NULL,
    current_mibps      REAL NOT NULL,
    ratio              REAL NOT NULL,
    ratio_low          REAL,
    ratio_high         REAL,
    baseline_n         INTEGER NOT NULL,
    current_n          INTEGER NOT NULL,
    p_value            REAL NOT NULL,
    size_growth        REAL,
    duration_ratio     REAL,
    baseline_duration_s REAL,
    current_duration_s REAL,
    restores_per_year  REAL,
    changed_factors    TEXT NOT NULL DEFAULT '[]',
    known_issues       TEXT NOT NULL DEFAULT '[]',
    note               TEXT NOT NULL DEFAULT '',
    status             TEXT NOT NULL DEFAULT 'open',   -- open | acknowledged | resolved
    status_note        TEXT NOT NULL DEFAULT '',
    status_at          INTEGER,
    first_seen         INTEGER NOT NULL,
    last_seen          INTEGER NOT NULL
);
CREATE INDEX regression_series ON regression (instance_id, database_name, kind, direction, status);

CREATE TABLE exposure (
    instance_id INTEGER NOT NULL REFERENCES instance (id) ON DELETE CASCADE,
    issue_id    TEXT NOT NULL,
    build       TEXT NOT NULL,
    conditions  TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (instance_id, issue_id)
);
