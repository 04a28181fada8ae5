-- A month's prune keeps the rows that stay in a partition of their own
-- (issue 41; SCALE.md, "Retention by month"): the month's kept rows are
-- copied into a new table while pages read on, and that table takes the
-- month's place. The month's partition then holds only its evidence; it is
-- recorded here so that later prunes do not take it for a month to drop
-- again (its rows leave one by one, as their evidence goes).
CREATE TABLE pruned_month (
    part_month INTEGER PRIMARY KEY,
    pruned_utc BIGINT NOT NULL
);
