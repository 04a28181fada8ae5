-- Warehouse-wide settings. derivation_version records which version of the
-- derivation wrote the restore rows: a restorewatch whose derivation differs
-- re-derives every instance once (store.Reconcile).
CREATE TABLE setting (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
