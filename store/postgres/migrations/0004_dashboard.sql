-- Indexes for the dashboard's read queries (store/dashboard.go), so that pages
-- stay fast on a million restores: every filter of the restores list and both
-- measure orders walk an index instead of the whole table.

-- The fleet throughput trend reads (kind, time, MiB/s) from this index alone.
CREATE INDEX restore_kind_at ON restore (kind, at_utc, logical_mibps);
-- "Slowest first" and "longest first" orders of the restores list.
CREATE INDEX restore_duration ON restore (duration_s);
CREATE INDEX restore_throughput ON restore (logical_mibps);
-- Filters of the restores list and the compare page.
CREATE INDEX restore_build ON restore (instance_build, at_utc);
CREATE INDEX restore_source ON restore (source_server, at_utc);
CREATE INDEX restore_database ON restore (database_name, at_utc);
