/*
backup_history_export.sql - restorewatch backup history export (for restore plans)

Reads msdb's backup history (backupset, its media set and media families,
and the database files each set holds from backupfile) and returns one row
per database file of each backup set, with the set's columns repeated and
its devices '|'-joined in stripe order: the columns
`restorewatch import backups` expects. Sets that msdb recorded because this
server RESTORED them (they have a restorehistory row) are left out: they
are another server's backups. Read-only; needs only db_datareader in msdb.
Runs on SQL Server 2008 R2 through 2022 and on Azure SQL Managed Instance:
every column it reads exists in msdb since SQL Server 2008; no STRING_AGG.

Parameters (edit below):
  @since        export only backups that finished on or after this local
                time, for incremental exports (default: everything msdb
                still holds).
  @database     one database only (NULL = all).
  @quote_text   1 (default): the query itself CSV-quotes the text columns,
                because sqlcmd never quotes and a comma in a path or database
                name would otherwise split the row. 0: leave quoting to a
                client that does it (Export-Csv). The importer reads either.

sqlcmd (recommended):
  sqlcmd -S SERVER -E -d msdb -i backup_history_export.sql -s"," -W -w 65535 -f o:65001 -o backups.csv
  (the same switches as restore_history_export.sql, for the same reasons:
  -W removes column padding, -w keeps a row on one line, -f o:65001 writes
  UTF-8; the dashed underline and "(N rows affected)" lines are skipped.)

PowerShell (SqlServer module):
  Invoke-Sqlcmd -ServerInstance SERVER -Database msdb -InputFile .\backup_history_export.sql |
    Export-Csv -Path backups.csv -NoTypeInformation -Encoding UTF8

dbatools: `Get-DbaDbBackupHistory -SqlInstance SERVER -IncludeCopyOnly -Raw |
Export-Csv -Path backups.csv -NoTypeInformation -Encoding UTF8` imports too
(without -Raw the paths come out as System.String[] and are refused), but it
has no file list, differential base or fork columns: prefer this query.

Dates are CONVERT(..., 121) in the server's local time, with time_zone
(backupset.time_zone, quarter hours from UTC, 127 = unknown) so the
importer can convert them to UTC. LSNs and sizes are decimal text so no
client turns them into floats. Bits are 0/1.
*/
SET NOCOUNT ON;

DECLARE @since datetime = '19000101';
DECLARE @database sysname = NULL;
DECLARE @quote_text bit = 1;

SELECT
    CASE WHEN @quote_text = 1 THEN N'"' + REPLACE(x.instance, N'"', N'""') + N'"' ELSE x.instance END AS instance,
    CASE WHEN @quote_text = 1 THEN N'"' + REPLACE(bs.database_name, N'"', N'""') + N'"' ELSE bs.database_name END AS database_name,
    CONVERT(char(36), bs.backup_set_uuid) AS backup_set_uuid,
    bs.media_set_id AS media_set_id,
    bms.media_family_count AS media_family_count,
    bs.[type] AS [type],
    CONVERT(tinyint, bs.is_copy_only) AS is_copy_only,
    CONVERT(tinyint, bs.is_damaged) AS is_damaged,
    CONVERT(tinyint, bs.has_backup_checksums) AS has_backup_checksums,
    CONVERT(tinyint, bs.has_bulk_logged_data) AS has_bulk_logged_data,
    CONVERT(varchar(25), bs.first_lsn) AS first_lsn,
    CONVERT(varchar(25), bs.last_lsn) AS last_lsn,
    CONVERT(varchar(25), bs.checkpoint_lsn) AS checkpoint_lsn,
    CONVERT(varchar(25), bs.database_backup_lsn) AS database_backup_lsn,
    CONVERT(varchar(25), bs.differential_base_lsn) AS differential_base_lsn,
    CONVERT(char(36), bs.differential_base_guid) AS differential_base_guid,
    CONVERT(varchar(25), bs.fork_point_lsn) AS fork_point_lsn,
    CONVERT(char(36), bs.first_recovery_fork_guid) AS first_recovery_fork_guid,
    CONVERT(char(36), bs.last_recovery_fork_guid) AS last_recovery_fork_guid,
    CONVERT(char(36), bs.family_guid) AS family_guid,
    CONVERT(varchar(23), bs.backup_start_date, 121) AS backup_start_date,
    CONVERT(varchar(23), bs.backup_finish_date, 121) AS backup_finish_date,
    bs.time_zone AS time_zone,
    CONVERT(varchar(20), bs.backup_size) AS backup_size,
    CONVERT(varchar(20), bs.compressed_backup_size) AS compressed_backup_size,
    bs.software_major_version AS software_major_version,
    bs.software_minor_version AS software_minor_version,
    bs.software_build_version AS software_build_version,
    CASE WHEN @quote_text = 1 THEN N'"' + REPLACE(bs.server_name, N'"', N'""') + N'"' ELSE bs.server_name END AS server_name,
    CASE WHEN @quote_text = 1 THEN N'"' + REPLACE(bs.machine_name, N'"', N'""') + N'"' ELSE bs.machine_name END AS machine_name,
    bs.recovery_model AS recovery_model,
    f1.device_type AS device_type,
    CASE WHEN @quote_text = 1 THEN N'"' + REPLACE(dev.names, N'"', N'""') + N'"' ELSE dev.names END AS physical_device_names,
    CASE WHEN @quote_text = 1 THEN N'"' + REPLACE(bf.logical_name, N'"', N'""') + N'"' ELSE bf.logical_name END AS logical_name,
    CASE WHEN @quote_text = 1 THEN N'"' + REPLACE(fp.name, N'"', N'""') + N'"' ELSE fp.name END AS physical_name,
    bf.file_type AS file_type,
    CONVERT(varchar(20), bf.file_size) AS file_size,
    CASE WHEN @quote_text = 1 THEN N'"' + REPLACE(bf.filegroup_name, N'"', N'""') + N'"' ELSE bf.filegroup_name END AS filegroup_name
FROM msdb.dbo.backupset AS bs
LEFT JOIN msdb.dbo.backupmediaset AS bms
    ON bms.media_set_id = bs.media_set_id
-- Files only for full backups (the plan moves them); a file with
-- is_present = 0 is not in the backup set (backupfile reference:
-- https://learn.microsoft.com/sql/relational-databases/system-tables/backupfile-transact-sql).
LEFT JOIN msdb.dbo.backupfile AS bf
    ON bf.backup_set_id = bs.backup_set_id AND bs.[type] = 'D' AND bf.is_present = 1
CROSS APPLY (
    SELECT COALESCE(@@SERVERNAME, CONVERT(nvarchar(128), SERVERPROPERTY('ServerName'))) AS instance
) AS x
-- backupfile splits a path into physical_drive and "the remainder"
-- (physical_name); a name that carries its own drive or root is whole.
OUTER APPLY (
    SELECT CASE
        WHEN bf.physical_name LIKE N'_:%' OR bf.physical_name LIKE N'\\%'
            OR bf.physical_name LIKE N'/%' OR bf.physical_drive IS NULL
            THEN bf.physical_name
        ELSE bf.physical_drive + bf.physical_name END AS name
) AS fp
-- The first family (stripe) says the device type; mirrors repeat the
-- families, so only mirror 0 counts.
OUTER APPLY (
    SELECT TOP (1) bmf.device_type
    FROM msdb.dbo.backupmediafamily AS bmf
    WHERE bmf.media_set_id = bs.media_set_id AND bmf.mirror = 0
    ORDER BY bmf.family_sequence_number
) AS f1
-- Every stripe's path, '|'-joined in stripe order (FOR XML PATH('') with
-- TYPE and .value() concatenates without escaping & and <), cut to fit
-- nvarchar(4000) once quoted, as sqlcmd -W shows no max type in full.
OUTER APPLY (
    SELECT CONVERT(nvarchar(3998), STUFF((
        SELECT N'|' + bmf.physical_device_name
        FROM msdb.dbo.backupmediafamily AS bmf
        WHERE bmf.media_set_id = bs.media_set_id AND bmf.mirror = 0
        ORDER BY bmf.family_sequence_number
        FOR XML PATH(''), TYPE
    ).value('.', 'nvarchar(max)'), 1, 1, N'')) AS names
) AS dev
WHERE bs.backup_finish_date >= @since
    AND (@database IS NULL OR bs.database_name = @database)
    AND NOT EXISTS (SELECT 1 FROM msdb.dbo.restorehistory AS rh WHERE rh.backup_set_id = bs.backup_set_id)
ORDER BY bs.backup_set_id, bf.file_number;
