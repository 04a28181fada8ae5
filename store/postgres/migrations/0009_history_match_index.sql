-- history_row_match was never read: reconciliation matches history rows to
-- log restores in Go, per instance. It cost every history row a B-tree
-- insert keyed by database name and LSNs.
DROP INDEX IF EXISTS history_row_match;
