-- restore_series (instance_id, database_name, kind, at_utc) is a prefix of
-- restore_scan (0013: the same four columns, then the measures the
-- dashboard scans), so every query that sought or walked it can seek and
-- walk restore_scan in the same order, and an instance's restores are read
-- through restore_instance_at (0022). Each restore written paid for a
-- fourth B-tree insert: ~0.5 s of the restores' writes of a day of the
-- 10 M estate, ~400 MB on disk (issue 16, BENCHMARKS.md "Session 10").
DROP INDEX IF EXISTS restore_series;
