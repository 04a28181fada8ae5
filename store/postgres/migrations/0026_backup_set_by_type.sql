-- A restore plan reads a database's fulls and differentials, then only its
-- log backups from a day before its base (plan.Make): with the type in the
-- index, both are seeks, where (instance_id, database_name, finish_utc)
-- made each read look up every set of the database's history (a
-- log-shipped database's 4,410 of 90 days: 30 ms of a 50 ms plan at 10 M
-- restores, issue 16, BENCHMARKS.md "Session 10"). It replaces
-- backup_set_database, whose queries (a database's sets, an instance's
-- newest finish, the databases with a history) it serves as well.
CREATE INDEX backup_set_type ON backup_set (instance_id, database_name, type, finish_utc);
DROP INDEX IF EXISTS backup_set_database;
