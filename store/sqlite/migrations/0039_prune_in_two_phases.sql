-- PostgreSQL's 0039 lists the facts a month's prune rolled up before the
-- month drops (issue 41; SCALE.md, "Retention by month"). SQLite deletes
-- rolled-up facts row by row in the roll-up's own transaction: this
-- migration only keeps the two engines' schema versions equal.
SELECT 1;
