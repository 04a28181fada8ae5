-- Derivation from the first changed fact onwards (issue 16): a collector
-- pass or one day's import adds a few restores to instances holding
-- thousands, and deriving each whole instance again cost ~0.1-0.2 ms per
-- restore it held. An import now also records, per instance, the local time
-- of the earliest fact it added (dirty_from; NULL: the whole instance, e.g.
-- an untimed record, client output, a new default offset or a retention
-- pass). Reconciliation then derives the facts of a window from a week
-- before that time and replaces only the restores that start on or after
-- its day; it checks the window against the stored restores of the days
-- before and derives the whole instance when they differ (see
-- store/window.go).
ALTER TABLE instance ADD COLUMN dirty_from BIGINT;
-- Set by every whole derivation: 1 when the instance's facts allow a
-- window (error-log and msdb facts only, all of them dated).
ALTER TABLE instance ADD COLUMN windowable BIGINT NOT NULL DEFAULT 0;
-- The restore_date semantics votes (derive.Instance.Semantics) by local
-- day of the restores that cast them, so that a window's votes replace its
-- days' and the instance's total stays exact.
CREATE TABLE derive_vote (
    instance_id BIGINT NOT NULL REFERENCES instance (id) ON DELETE CASCADE,
    day         BIGINT NOT NULL, -- local day: Unix ms / 86,400,000
    start_votes BIGINT NOT NULL,
    end_votes   BIGINT NOT NULL,
    PRIMARY KEY (instance_id, day)
);
-- The window's reads: an instance's facts from a local time on.
CREATE INDEX history_row_time ON history_row (instance_id, restore_local);
CREATE INDEX log_restore_time ON log_restore (instance_id, completed_local);
