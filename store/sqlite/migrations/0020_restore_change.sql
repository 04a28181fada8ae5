-- The restores' change log, which the dashboard's fleet-wide orders
-- (store.RestoreOrders) read to update themselves after an import instead of
-- rebuilding from a scan of every restore (about 3 s a million). Every
-- reconciliation transaction appends, before it commits, one row per restore
-- it wrote (natural_key) or deleted (restore_id); a row with neither says
-- "too much changed: rebuild" (a bulk reconciliation, or one transaction of
-- more restores than the log takes row by row). AUTOINCREMENT keeps seq
-- growing even once old rows are pruned: a reader remembers the seq it
-- reflects. The setting 'restore_change_pruned' names the newest seq pruned;
-- a reader behind it rebuilds.
CREATE TABLE restore_change (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    natural_key INTEGER,
    restore_id  INTEGER,
    CHECK (natural_key IS NULL OR restore_id IS NULL)
);
