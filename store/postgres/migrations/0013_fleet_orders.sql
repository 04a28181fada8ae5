-- The restores list's fleet-wide orders and filters (time, kind, instance
-- build, database, source server), the overview's counts and throughput
-- trend and the compare page's build and period sides are answered from
-- RestoreOrders, which the dashboard keeps in memory from one scan of
-- restore_scan: these five indexes were read only for them, and rebuilding
-- them cost a large import about 8 s of every million restores.
-- restore_scan carries the source server for it (at its end, so the
-- analysis reads it as before: about 0.1 s more to build, against 1.4 s for
-- restore_source). A bulk reconciliation that crashed with indexes dropped
-- must not build these again, nor the old restore_scan.
DROP INDEX IF EXISTS restore_at;
DROP INDEX IF EXISTS restore_kind_at;
DROP INDEX IF EXISTS restore_build;
DROP INDEX IF EXISTS restore_database;
DROP INDEX IF EXISTS restore_source;
DROP INDEX IF EXISTS restore_scan;
CREATE INDEX restore_scan ON restore (instance_id, database_name, kind, at_utc, duration_s, backup_bytes, pages,
    logical_mibps, compressed, encrypted, io_alignment, device_kind, stripes, instance_build, source_server);
UPDATE setting SET value = (value::jsonb - 'restore_at' - 'restore_kind_at' - 'restore_build'
    - 'restore_database' - 'restore_source' - 'restore_scan')::text
WHERE key = 'dropped_restore_indexes';
