-- A month's prune in two phases (issue 41; SCALE.md, "Retention by month").
-- The roll-up of every instance runs first, instance by instance in short
-- transactions that take no table lock; the facts it rolled up in the
-- months about to drop are listed here instead of deleted, so that a crash
-- or a prune that could not have its lock leaves them listed (rolled up
-- once, still raw) and the next prune drops them without rolling them up
-- again. The drop, under the tables' ACCESS EXCLUSIVE lock, then only
-- detaches the months, puts back what is not listed and drops them.
CREATE TABLE prune_gone_history (
    id          BIGINT PRIMARY KEY,   -- history_row.id
    instance_id BIGINT NOT NULL REFERENCES instance (id) ON DELETE CASCADE,
    part_month  INTEGER NOT NULL
);
CREATE TABLE prune_gone_log (
    id          BIGINT PRIMARY KEY,   -- log_restore.id
    instance_id BIGINT NOT NULL REFERENCES instance (id) ON DELETE CASCADE,
    part_month  INTEGER NOT NULL
);
-- The instances a prune rolled up and has not yet handed to derivation,
-- with their evidence_rev when their evidence was computed. evidence_rev
-- counts what can make an old restore evidence: saved findings (a
-- regression, a watch, a series' outliers and change points) and a
-- derivation that deleted restores (a series' last ones move back). An
-- instance whose count moved since has its evidence computed again before
-- its month drops, so a restore that became evidence in between stays raw;
-- a derivation that only added restores moves nothing.
CREATE TABLE prune_stamp (
    instance_id BIGINT PRIMARY KEY REFERENCES instance (id) ON DELETE CASCADE,
    evidence    BIGINT NOT NULL
);
ALTER TABLE instance ADD COLUMN evidence_rev BIGINT NOT NULL DEFAULT 0;
