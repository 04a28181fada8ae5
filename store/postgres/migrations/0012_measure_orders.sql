-- The fleet-wide orders by duration and by throughput are sorted in memory
-- from restore_scan (RestoreOrders), which the dashboard caches: these two
-- indexes were read only to build them, and rebuilding them cost a large
-- import about 2.3 s of every million restores. A bulk reconciliation that
-- crashed with them dropped must not build them again.
DROP INDEX IF EXISTS restore_duration;
DROP INDEX IF EXISTS restore_throughput;
UPDATE setting SET value = (value::jsonb - 'restore_duration' - 'restore_throughput')::text
WHERE key = 'dropped_restore_indexes';
