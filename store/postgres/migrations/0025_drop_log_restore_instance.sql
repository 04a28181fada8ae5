-- log_restore_instance (instance_id, database_name) served no query: the
-- window reads go through log_restore_time (instance_id, completed_local),
-- a restore's evidence by id, and an instance's deletion through either of
-- the other two indexes, which both begin with instance_id. Each error-log
-- line stored paid for it: one B-tree insert of four (issue 16,
-- BENCHMARKS.md "Session 8").
DROP INDEX IF EXISTS log_restore_instance;
