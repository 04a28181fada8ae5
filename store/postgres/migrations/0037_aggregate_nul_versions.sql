-- SQLite's 0037 deletes kept aggregates whose version holds a NUL, which
-- PostgreSQL's text never held; the file keeps the two engines' schema
-- versions equal.
SELECT 1;
