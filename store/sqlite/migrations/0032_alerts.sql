-- Alerts (issue 37): an outbox written in the same transaction as the
-- finding it is about, so a finding never commits without its alert nor an
-- alert without its finding. key is stable (re-deriving the same finding
-- gives the same key) and unique: the outbox keeps one event per key.
-- body is the event (store.AlertEvent) as JSON. routed turns 1 once the
-- sender has made the event's deliveries under the configured routes.
CREATE TABLE alert_event (
    id            INTEGER PRIMARY KEY,
    key           TEXT    NOT NULL UNIQUE,
    kind          TEXT    NOT NULL,
    severity      TEXT    NOT NULL,
    instance      TEXT    NOT NULL DEFAULT '',
    database_name TEXT    NOT NULL DEFAULT '',
    body          TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,      -- UTC ms
    routed        INTEGER NOT NULL DEFAULT 0,
    acked_by      TEXT    NOT NULL DEFAULT '',
    ack_note      TEXT    NOT NULL DEFAULT '',
    acked_at      INTEGER                -- UTC ms
);
CREATE INDEX alert_event_unrouted ON alert_event (id) WHERE routed = 0;
CREATE INDEX alert_event_created ON alert_event (created_at);

-- One event's delivery to one channel. A delivery is marked sent only after
-- the receiver acknowledged it; one that was being sent when the process
-- died is still pending or retrying, and is sent again (at least once; the
-- receivers dedupe by the event's key). mode "digest" waits for the
-- channel's next digest (next_at).
CREATE TABLE alert_delivery (
    event_id   INTEGER NOT NULL REFERENCES alert_event (id) ON DELETE CASCADE,
    channel    TEXT    NOT NULL,
    mode       TEXT    NOT NULL,        -- now | digest
    state      TEXT    NOT NULL,        -- pending | retrying | sent | silenced
    attempts   INTEGER NOT NULL DEFAULT 0,
    next_at    INTEGER NOT NULL,        -- UTC ms
    last_error TEXT    NOT NULL DEFAULT '',
    sent_at    INTEGER,                 -- UTC ms
    note       TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (event_id, channel)
) WITHOUT ROWID;
CREATE INDEX alert_delivery_due ON alert_delivery (channel, mode, next_at) WHERE state IN ('pending', 'retrying');

-- Silences: who held back which alerts (an instance name or pattern, an
-- event kind, one alert's key; empty matches anything), why, until when.
CREATE TABLE alert_silence (
    id         INTEGER PRIMARY KEY,
    instance   TEXT    NOT NULL DEFAULT '',
    kind       TEXT    NOT NULL DEFAULT '',
    key        TEXT    NOT NULL DEFAULT '',
    created_by TEXT    NOT NULL,
    reason     TEXT    NOT NULL,
    created_at INTEGER NOT NULL,        -- UTC ms
    until_at   INTEGER NOT NULL         -- UTC ms
);

-- Conditions the sender evaluates rather than an analysis saves (an RTO
-- breach, a knee in flight, a silent instance or zone, a failing
-- collector): each holds while it is found, since when, so that one breach
-- is one alert however many passes find it, and a new breach after it
-- cleared is a new alert.
CREATE TABLE alert_condition (
    cond  TEXT    NOT NULL PRIMARY KEY,
    kind  TEXT    NOT NULL,
    since INTEGER NOT NULL              -- UTC ms
) WITHOUT ROWID;
