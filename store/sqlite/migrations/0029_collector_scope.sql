-- A pushing collector writes only its own zone's instances (issue 28): the
-- names or patterns given at `token create` (a JSON array; empty: any
-- instance not yet in the warehouse), and, either way, only the instances
-- it wrote first. An instance is claimed by the first collector that
-- writes it; an instance imported or collected by this server itself
-- belongs to no collector and no push may write it.

ALTER TABLE collector_token ADD COLUMN instances TEXT NOT NULL DEFAULT '[]';

CREATE TABLE collector_instance (
    instance   TEXT NOT NULL PRIMARY KEY COLLATE NOCASE,
    collector  TEXT NOT NULL COLLATE NOCASE,
    claimed_at INTEGER NOT NULL           -- UTC ms
);
CREATE INDEX collector_instance_collector ON collector_instance (collector);

-- The instances collectors pushed before this migration are theirs: a
-- push's import is named "collector/instance".
INSERT OR IGNORE INTO collector_instance (instance, collector, claimed_at)
SELECT substr(r.file, length(t.name) + 2), t.name, MIN(r.started_at)
FROM import_run AS r
JOIN collector_token AS t ON substr(r.file, 1, length(t.name) + 1) = (t.name || '/') COLLATE NOCASE
WHERE length(r.file) > length(t.name) + 1
GROUP BY substr(r.file, length(t.name) + 2), t.name
ORDER BY MIN(r.started_at);
