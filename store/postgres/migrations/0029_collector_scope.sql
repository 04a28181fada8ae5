-- A pushing collector writes only its own zone's instances (issue 28): the
-- names or patterns given at `token create` (a JSON array; empty: any
-- instance not yet in the warehouse), and, either way, only the instances
-- it wrote first. An instance is claimed by the first collector that
-- writes it; an instance imported or collected by this server itself
-- belongs to no collector and no push may write it.

ALTER TABLE collector_token ADD COLUMN instances TEXT NOT NULL DEFAULT '[]';

CREATE TABLE collector_instance (
    instance   CITEXT NOT NULL PRIMARY KEY,
    collector  CITEXT NOT NULL,
    claimed_at BIGINT NOT NULL           -- UTC ms
);
CREATE INDEX collector_instance_collector ON collector_instance (collector);

-- The instances collectors pushed before this migration are theirs: a
-- push's import is named "collector/instance".
-- (PostgreSQL: no warehouse on this engine predates schema 33, so the copy of
-- existing rows that the SQLite migration makes has nothing to copy and is left out.)
