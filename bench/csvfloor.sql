-- The C sqlite3 CLI's floor for a history CSV import (bench/csvfloor.sh):
-- `.import` reads the file with the CLI's own CSV reader into a scratch table,
-- then the same rows go into the warehouse's two tables, history_row and
-- restore, with their keys (history_row's UNIQUE (instance, restore_history_id,
-- restore_local), restore's natural_key), the values in the form restorewatch
-- stores them: a history row's facts as one JSON array, a restore's ~25 columns
-- a history row alone fills. No derivation, no analysis, no duplicate rows in
-- the file: SQLite's own CSV, B-tree and JSON work for the same rows.
-- Run on a copy of an empty warehouse (the migrations' schema), so the tables
-- are the warehouse's own. The script's -cmd sets csvfile and origin.
PRAGMA synchronous = NORMAL;
PRAGMA cache_size = -32768;
.bail on
.import --csv --schema temp :csvfile: csvin
BEGIN;
INSERT INTO instance (name, created_at) SELECT DISTINCT instance, 0 FROM temp.csvin WHERE true
	ON CONFLICT (name) DO NOTHING;
INSERT INTO history_row (id, instance_id, restore_history_id, restore_local, facts, origin)
SELECT c.rowid, i.id, CAST(c.restore_history_id AS INTEGER),
	unixepoch(c.restore_date) * 1000 + CAST(substr(c.restore_date, 21, 3) AS INTEGER),
	json_array(c.destination_database_name, c.user_name, c.restore_type, CAST(c."replace" AS INTEGER),
		CAST(c.recovery AS INTEGER), NULLIF(c.stop_at, ''), CAST(c.device_count AS INTEGER), c.backup_set_uuid,
		c.family_guid, c.source_server_name, c.source_machine_name, c.source_database_name, c.backup_type,
		unixepoch(c.backup_start_date) * 1000, unixepoch(c.backup_finish_date) * 1000, c.first_lsn, c.last_lsn,
		CAST(c.backup_size AS INTEGER), CAST(c.compressed_backup_size AS INTEGER),
		CAST(c.software_major_version AS INTEGER), CAST(c.software_minor_version AS INTEGER),
		CAST(c.software_build_version AS INTEGER), CAST(c.is_copy_only AS INTEGER),
		CAST(c.has_backup_checksums AS INTEGER), NULLIF(c.key_algorithm, ''), CAST(c.media_family_count AS INTEGER),
		CAST(c.device_type AS INTEGER), json_array(c.physical_device_names), json_array(), 'history'),
	':origin:' || (c.rowid + 1)
FROM temp.csvin c JOIN instance i ON i.name = c.instance WHERE true
	ON CONFLICT (instance_id, restore_history_id, restore_local) DO NOTHING;
INSERT INTO restore (instance_id, natural_key, content_hash, history_id, database_name, kind, at_utc,
	restore_date_local, offset_known, duration_source, backup_bytes, compressed_bytes, size_source, source_server,
	source_database, source_build, family, compressed, encrypted, checksum, copy_only, devices, device_kind, stripes,
	user_name, sources)
SELECT h.instance_id, h.id, random(), h.id, c.destination_database_name,
	CASE c.restore_type WHEN 'D' THEN 'full' WHEN 'I' THEN 'diff' WHEN 'L' THEN 'log' ELSE 'other' END,
	h.restore_local, h.restore_local, 0, 'unknown', CAST(c.backup_size AS INTEGER),
	CAST(c.compressed_backup_size AS INTEGER), 'backup_size', c.source_server_name, c.source_database_name,
	c.software_major_version || '.' || c.software_minor_version || '.' || c.software_build_version,
	lower(c.family_guid), CAST(c.compressed_backup_size AS INTEGER) < CAST(c.backup_size AS INTEGER),
	c.key_algorithm != '', CAST(c.has_backup_checksums AS INTEGER), CAST(c.is_copy_only AS INTEGER),
	json_array(c.physical_device_names),
	CASE WHEN c.physical_device_names LIKE '\\%' THEN 'unc_share' ELSE 'disk' END,
	CAST(c.media_family_count AS INTEGER), c.user_name, 'history'
FROM history_row h JOIN temp.csvin c ON c.rowid = h.id WHERE true
	ON CONFLICT (natural_key) DO NOTHING;
COMMIT;
