-- Files a run of `restorewatch import` read to their end and committed:
-- their content's SHA-256 with the options that shape their records (kind,
-- instance, database, completion time, date order), so re-importing an
-- unchanged folder skips what it already holds instead of parsing it again.
CREATE TABLE imported_file (
	fingerprint TEXT PRIMARY KEY,
	path        TEXT NOT NULL,
	size        BIGINT NOT NULL,
	records     BIGINT NOT NULL,
	rejected    BIGINT NOT NULL,
	imported_at BIGINT NOT NULL
);
