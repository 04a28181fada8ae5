-- A series page (/api/restores?instance=…, Restores with Series) orders by
-- instance, database and kind bytewise (COLLATE "C", as SQLite orders text)
-- and pages by keyset on the same tuple. restore_series holds database and
-- kind in the database's collation, which the planner cannot use for a
-- "C" order, so each page read every restore of the instance and sorted
-- them: 64 ms for a log-shipping secondary of 22,500 restores on the 3 M
-- estate, 2.2× SQLite's p95 at 8 clients (bench/engines.sh). This index
-- answers the order and the keyset directly. restore_series stays: its
-- equality lookups (a series' restores) use the database's collation.
-- (After 0035, restore is partitioned by month: the index is made on each
-- month's partition and on every partition made later.)
CREATE INDEX restore_series_bytewise ON restore
    (instance_id, database_name COLLATE "C", kind COLLATE "C", at_utc, id);
