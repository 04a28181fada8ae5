-- PostgreSQL's 0035 partitions restore, log_restore and history_row by month
-- (issue 41; SCALE.md, "Time-partitioned restore tables"). SQLite keeps its
-- unpartitioned tables: this migration only keeps the two engines' schema
-- versions equal, so one number still means the same tables on both.
SELECT 1;
