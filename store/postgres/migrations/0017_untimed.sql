-- Log records that reconciliation could place nowhere in time (client output
-- without a completion stamp or --at, Restore-DbaDatabase rows that pair with
-- no history row), counted per instance and source. The records stay in
-- log_restore; this says how many wait for a later import to date them, so
-- nothing vanishes silently. Rewritten by every reconciliation of the
-- instance; derivation version 5 re-derives every instance, which fills it.
CREATE TABLE untimed_record (
    instance_id BIGINT NOT NULL REFERENCES instance (id) ON DELETE CASCADE,
    source      TEXT NOT NULL,
    records     BIGINT NOT NULL,
    PRIMARY KEY (instance_id, source)
);
