-- PostgreSQL's 0036 adds an index ordering a series page bytewise; SQLite
-- already orders text bytewise through restore_series, so nothing changes
-- here. The file keeps the two engines' schema versions equal.
SELECT 1;
