/*
restore_history.sql - restorewatch live collector, source "history" (SPEC 3.1)

msdb's restore history with the backup set each restore read: restorehistory
LEFT JOIN backupset LEFT JOIN backupmediaset, the stripes' device paths from
backupmediafamily, the files each restore wrote from restorefile. Left joins: a restore whose backup set was purged is still
a restore. Read-only; needs SELECT on these msdb tables (db_datareader in
msdb). SQL Server 2008 R2 and later: no STRING_AGG, FOR XML PATH instead.

The file holds two queries, each starting at a "-- restorewatch:" marker
line; the collector runs them one at a time through sp_executesql with the
parameters below. A line ending in "-- restorewatch:since N else X" is sent
as X to servers older than major version N (12 = SQL Server 2014; Azure SQL
Managed Instance reports 12 and has key_algorithm too). mssqltest/columns
lists which version has which column, with Microsoft's pages.

To run it in SSMS, uncomment and edit this line:
-- DECLARE @watermark int = 0, @upto int = 2147483647, @batch int = 5000;
*/

-- restorewatch:restore_history/check
-- Where the table stands. restore_history_id is an identity: it restarts at
-- 1 when msdb is rebuilt (or restored from an old backup), which the
-- collector detects as max_id below its watermark, or as the watermark row
-- carrying another date, or gone while older rows remain (a purge removes
-- the oldest rows only).
SELECT
    (SELECT MIN(rh.restore_history_id) FROM msdb.dbo.restorehistory AS rh) AS min_id,
    (SELECT MAX(rh.restore_history_id) FROM msdb.dbo.restorehistory AS rh) AS max_id,
    (SELECT rh.restore_date FROM msdb.dbo.restorehistory AS rh
     WHERE rh.restore_history_id = @watermark) AS watermark_date;

-- restorewatch:restore_history/rows
-- The next batch after the watermark, oldest first. @upto is max_id as the
-- check query saw it, so rows written meanwhile wait for the next pass.
SELECT TOP (@batch)
    rh.restore_history_id,
    rh.restore_date,                      -- datetime, the instance's local time
    rh.destination_database_name,
    rh.[user_name],
    rh.restore_type,                      -- D F G I L V R P
    rh.[replace],
    rh.[recovery],
    rh.stop_at,
    rh.device_count,
    bs.backup_set_uuid,
    bs.family_guid,
    bs.server_name AS source_server_name, -- the server that took the backup
    bs.machine_name AS source_machine_name,
    bs.database_name AS source_database_name,
    bs.[type] AS backup_type,
    bs.backup_start_date,
    bs.backup_finish_date,
    bs.first_lsn,                         -- numeric(25,0)
    bs.last_lsn,
    bs.backup_size,                       -- numeric(20,0), bytes
    bs.compressed_backup_size,
    bs.software_major_version,            -- build that wrote the backup
    bs.software_minor_version,
    bs.software_build_version,
    bs.is_copy_only,
    bs.has_backup_checksums,
    bs.key_algorithm,                     -- restorewatch:since 12 else CONVERT(nvarchar(32), NULL) AS key_algorithm,
    bms.media_family_count,               -- stripes
    f1.device_type,                       -- 2 disk, 5 tape, 7 virtual device, 9 URL
    dev.physical_device_names,            -- stripe paths, '|'-joined in stripe order
    dst.destination_files                 -- files written (restorefile), '|'-joined in file order
FROM msdb.dbo.restorehistory AS rh
LEFT JOIN msdb.dbo.backupset AS bs
    ON bs.backup_set_id = rh.backup_set_id
LEFT JOIN msdb.dbo.backupmediaset AS bms
    ON bms.media_set_id = bs.media_set_id
-- The first family says what kind of device held the backup; mirrors repeat
-- the families, so only mirror 0 counts.
OUTER APPLY (
    SELECT TOP (1) bmf.device_type
    FROM msdb.dbo.backupmediafamily AS bmf
    WHERE bmf.media_set_id = bs.media_set_id AND bmf.mirror = 0
    ORDER BY bmf.family_sequence_number
) AS f1
-- FOR XML PATH('') with TYPE and .value() concatenates without turning & and
-- < into entities.
OUTER APPLY (
    SELECT STUFF((
        SELECT N'|' + bmf.physical_device_name
        FROM msdb.dbo.backupmediafamily AS bmf
        WHERE bmf.media_set_id = bs.media_set_id AND bmf.mirror = 0
        ORDER BY bmf.family_sequence_number
        FOR XML PATH(''), TYPE
    ).value('.', 'nvarchar(max)'), 1, 1, N'') AS physical_device_names
) AS dev
-- Where the restore put each database file: restorefile has one row per file
-- (also those restored implicitly through a filegroup). destination_phys_name
-- gets destination_phys_drive in front when it carries no drive or root.
OUTER APPLY (
    SELECT STUFF((
        SELECT N'|' + CASE
            WHEN rf.destination_phys_name LIKE N'_:%' OR rf.destination_phys_name LIKE N'\\%'
                OR rf.destination_phys_name LIKE N'/%' OR rf.destination_phys_drive IS NULL
                THEN rf.destination_phys_name
            ELSE rf.destination_phys_drive + rf.destination_phys_name END
        FROM msdb.dbo.restorefile AS rf
        WHERE rf.restore_history_id = rh.restore_history_id AND rf.destination_phys_name IS NOT NULL
        ORDER BY rf.file_number
        FOR XML PATH(''), TYPE
    ).value('.', 'nvarchar(max)'), 1, 1, N'') AS destination_files
) AS dst
WHERE rh.restore_history_id > @watermark
  AND rh.restore_history_id <= @upto
ORDER BY rh.restore_history_id;
