-- The restores list's fleet-wide orders and filters (time, kind, instance
-- build, database), the overview's counts and throughput trend and the
-- compare page's build and period sides are answered from RestoreOrders,
-- which the dashboard keeps in memory from one scan of restore_scan: these
-- four indexes were read only for them, and rebuilding them cost a large
-- import about 6.5 s of every million restores. The source-server filter
-- keeps restore_source (restore_scan does not carry the source). A bulk
-- reconciliation that crashed with them dropped must not build them again.
DROP INDEX IF EXISTS restore_at;
DROP INDEX IF EXISTS restore_kind_at;
DROP INDEX IF EXISTS restore_build;
DROP INDEX IF EXISTS restore_database;
UPDATE setting SET value = json_remove(value, '$.restore_at', '$.restore_kind_at', '$.restore_build', '$.restore_database')
WHERE key = 'dropped_restore_indexes' AND json_valid(value);
