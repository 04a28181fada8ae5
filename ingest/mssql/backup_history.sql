/*
backup_history.sql - restorewatch live collector, source "backups" (restore plans)

msdb's backup history: backupset with its media set, the stripes' device
paths from backupmediafamily (mirror 0, in stripe order) and, for full
backups, the database files from backupfile. Sets msdb recorded because
this server RESTORED them (they have a restorehistory row) are another
server's backups and are left out. Read-only; needs SELECT on these msdb
tables (db_datareader in msdb). SQL Server 2008 R2 and later: every column
read exists since SQL Server 2008; no STRING_AGG.

Three queries, each starting at a "-- restorewatch:" marker line, run one
at a time through sp_executesql. backup_set_id is an identity: the
collector keeps the last one read as its watermark, as for restore history.

To run it in SSMS, uncomment and edit this line:
-- DECLARE @watermark int = 0, @upto int = 2147483647, @batch int = 5000;
*/

-- restorewatch:backup_history/check
-- Where the table stands: a rebuilt msdb restarts the identity, seen as
-- max_id below the watermark or the watermark row carrying another date.
SELECT
    (SELECT MIN(bs.backup_set_id) FROM msdb.dbo.backupset AS bs) AS min_id,
    (SELECT MAX(bs.backup_set_id) FROM msdb.dbo.backupset AS bs) AS max_id,
    (SELECT bs.backup_finish_date FROM msdb.dbo.backupset AS bs
     WHERE bs.backup_set_id = @watermark) AS watermark_date;

-- restorewatch:backup_history/rows
-- The next batch of backup sets after the watermark, oldest first.
SELECT TOP (@batch)
    bs.backup_set_id,
    bs.backup_set_uuid,
    bs.database_name,
    bs.media_set_id,
    bms.media_family_count,               -- stripes
    bs.[type],                            -- D I L F G P Q
    bs.is_copy_only,
    bs.is_damaged,
    bs.has_backup_checksums,
    bs.has_bulk_logged_data,
    bs.first_lsn,                         -- numeric(25,0)
    bs.last_lsn,
    bs.checkpoint_lsn,
    bs.database_backup_lsn,
    bs.differential_base_lsn,
    bs.differential_base_guid,
    bs.fork_point_lsn,
    bs.first_recovery_fork_guid,
    bs.last_recovery_fork_guid,
    bs.backup_start_date,                 -- the server's local time
    bs.backup_finish_date,
    bs.time_zone,                         -- quarter hours from UTC; 127 = unknown
    bs.backup_size,                       -- numeric(20,0), bytes
    bs.compressed_backup_size,
    bs.software_major_version,
    bs.software_minor_version,
    bs.software_build_version,
    bs.server_name,
    bs.machine_name,
    bs.recovery_model,
    f1.device_type,                       -- 2 disk, 5 tape, 7 virtual device, 9 URL
    dev.physical_device_names,            -- stripe paths, '|'-joined in stripe order
    bs.family_guid                        -- the database's identity since its creation
FROM msdb.dbo.backupset AS bs
LEFT JOIN msdb.dbo.backupmediaset AS bms
    ON bms.media_set_id = bs.media_set_id
OUTER APPLY (
    SELECT TOP (1) bmf.device_type
    FROM msdb.dbo.backupmediafamily AS bmf
    WHERE bmf.media_set_id = bs.media_set_id AND bmf.mirror = 0
    ORDER BY bmf.family_sequence_number
) AS f1
OUTER APPLY (
    SELECT STUFF((
        SELECT N'|' + bmf.physical_device_name
        FROM msdb.dbo.backupmediafamily AS bmf
        WHERE bmf.media_set_id = bs.media_set_id AND bmf.mirror = 0
        ORDER BY bmf.family_sequence_number
        FOR XML PATH(''), TYPE
    ).value('.', 'nvarchar(max)'), 1, 1, N'') AS physical_device_names
) AS dev
WHERE bs.backup_set_id > @watermark
  AND bs.backup_set_id <= @upto
  AND NOT EXISTS (SELECT 1 FROM msdb.dbo.restorehistory AS rh WHERE rh.backup_set_id = bs.backup_set_id)
ORDER BY bs.backup_set_id;

-- restorewatch:backup_history/files
-- The database files of the full backups in (@watermark, @upto], for the
-- MOVE clauses of a restore script. backupfile splits a path into
-- physical_drive and "the remainder" (physical_name); is_present = 0 marks
-- a file the backup set does not contain.
SELECT
    bf.backup_set_id,
    bf.logical_name,
    CASE
        WHEN bf.physical_name LIKE N'_:%' OR bf.physical_name LIKE N'\\%'
            OR bf.physical_name LIKE N'/%' OR bf.physical_drive IS NULL
            THEN bf.physical_name
        ELSE bf.physical_drive + bf.physical_name END AS physical_name,
    bf.file_type,                         -- D data, L log, F full-text catalog
    bf.file_size,
    bf.filegroup_name
FROM msdb.dbo.backupfile AS bf
JOIN msdb.dbo.backupset AS bs
    ON bs.backup_set_id = bf.backup_set_id
WHERE bf.backup_set_id > @watermark
  AND bf.backup_set_id <= @upto
  AND bs.[type] = 'D'
  AND bf.is_present = 1
ORDER BY bf.backup_set_id, bf.file_number;

-- restorewatch:backup_history/availability
-- The availability-group databases this instance holds a replica of, so a
-- restore plan can merge the backup history every replica's msdb keeps
-- (backups run wherever the AG's backup preference puts them). Read on
-- every pass, whether or not the instance backs anything up: a replica that
-- never takes a backup is a member all the same.
-- group_database_id identifies the AG database on every replica. Only DMVs
-- name the group, so VIEW SERVER STATE is enough (sys.dm_hadr_name_id_map:
-- the catalog view sys.availability_groups shows no row to a login without
-- VIEW ANY DEFINITION). A distributed AG (and a Managed Instance link, which
-- is one) lists the database a second time: its replicas are availability
-- groups, so one of its replica names is the name of an AG of this
-- instance; is_distributed says so and such rows sort after the database's
-- own AG. The listener's name is in a catalog view only: without VIEW ANY
-- DEFINITION it is NULL, and can_view_definition = 0 says why.
-- The views came with SQL Server 2012 (Managed Instance has them): named
-- inside EXEC, which compiles only where they exist; before, no row.
IF OBJECT_ID(N'sys.dm_hadr_database_replica_states') IS NOT NULL
    EXEC (N'SELECT m.ag_name, DB_NAME(drs.database_id) AS database_name, drs.group_database_id,
                   (SELECT TOP (1) agl.dns_name FROM sys.availability_group_listeners AS agl
                    WHERE agl.group_id = drs.group_id ORDER BY agl.dns_name) AS listener,
                   CASE WHEN EXISTS (SELECT 1 FROM sys.dm_hadr_availability_replica_cluster_states AS rcs
                                     JOIN sys.dm_hadr_name_id_map AS m2 ON m2.ag_name = rcs.replica_server_name
                                     WHERE rcs.group_id = drs.group_id) THEN 1 ELSE 0 END AS is_distributed,
                   HAS_PERMS_BY_NAME(NULL, NULL, N''VIEW ANY DEFINITION'') AS can_view_definition
            FROM sys.dm_hadr_database_replica_states AS drs
            JOIN sys.dm_hadr_name_id_map AS m ON m.ag_id = drs.group_id
            WHERE drs.is_local = 1
            ORDER BY database_name, is_distributed, m.ag_name');
