-- How many times reconciliation has written the instance's restores. A
-- reconciliation reads an instance's facts and its stored restores in one
-- snapshot on the read pool and decides there what to write (issue 16: the
-- writer is the narrowest step of a day's import); the writer applies that
-- only if no other process wrote the instance's restores since the snapshot,
-- which this counter says (dirty alone cannot: another process may clear it
-- and an import raise it again to the same value).
ALTER TABLE instance ADD COLUMN derived BIGINT NOT NULL DEFAULT 0;
