-- The dashboard's fleet-wide orders (store.RestoreOrders), kept between
-- runs of the server (issue 32): building them reads every restore (29-44 s
-- at 10 M restores), and until they exist the overview and the restores list
-- cannot answer. A snapshot is the orders at one position of the restore
-- change log (0020), in parts of a few MiB; a server that starts loads the
-- newest complete one and brings it up to date from the log like any other
-- update (or rebuilds when the log no longer reaches back to it). A
-- generation is complete once its part 0, the header, is written; saving
-- writes the other parts first, in several transactions, so an import is
-- never held up for long.
CREATE TABLE order_snapshot (
    gen  BIGINT NOT NULL,
    part BIGINT NOT NULL,
    body BYTEA       NOT NULL,
    PRIMARY KEY (gen, part)
);

-- The dashboard's other slow aggregates (the build cohorts), each the last
-- value computed with the data version it was computed at (a text the
-- server makes, store.DB.DataVersion and its own settings): a server that
-- starts shows it at once when the version is still current, and as the
-- previous version's figures while it computes the new ones otherwise, as
-- it does after any import.
CREATE TABLE aggregate_snapshot (
    name     TEXT    NOT NULL PRIMARY KEY,
    version  TEXT    NOT NULL,
    took_ms  BIGINT NOT NULL,
    saved_at BIGINT NOT NULL,      -- UTC ms
    body     BYTEA       NOT NULL
);
