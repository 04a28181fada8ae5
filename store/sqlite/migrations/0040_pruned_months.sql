-- PostgreSQL's 0040 records the months its prune kept in partitions of
-- their own (issue 41; SCALE.md, "Retention by month"). SQLite has no
-- partitions: this migration only keeps the two engines' schema versions
-- equal.
SELECT 1;
