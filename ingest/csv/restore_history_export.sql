/*
restore_history_export.sql - restorewatch history export (SPEC 3.3)

Reads msdb's restore history (restorehistory, the backup set each restore
read, its media set and media families, the files it wrote from restorefile)
and returns one row per restore, with
the columns `restorewatch import history` expects. Read-only (it writes only
a table variable of its own); needs only db_datareader in msdb. Runs on SQL
Server 2008 R2 and later and on Azure SQL Managed Instance: no STRING_AGG,
and key_algorithm, which msdb has only from SQL Server 2014, is read only
where the column exists (NULL on 2008 R2 and 2012).

Parameters (edit below):
  @since        export only restores on or after this local time, for
                incremental exports (default: everything msdb still holds).
  @quote_text   1 (default): the query itself CSV-quotes the text columns,
                because sqlcmd never quotes and a comma in a device path or
                database name would otherwise split the row. Text values come
                out as "value" with inner quotes doubled; NULL stays NULL.
                0: leave quoting to a client that does it (Export-Csv). The
                importer reads either setting from either client.

sqlcmd (recommended):
  sqlcmd -S SERVER -E -d msdb -i restore_history_export.sql -s"," -W -w 65535 -f o:65001 -o history.csv
    -s","      comma between columns (sqlcmd does not quote; this query does).
    -W         remove the padding sqlcmd adds to fill each column's width;
               without it the padding lands after the closing quotes and the
               rows are unreadable CSV. (-W cannot be combined with -y/-Y, so
               the device list is nvarchar(4000), never a max type.)
    -w 65535   keep each row on one line.
    -f o:65001 write UTF-8 so non-ASCII database names survive.
  sqlcmd underlines the header with a dashed line (----,----); the importer
  skips it, and also skips a "(N rows affected)" line should one appear.
  Use -U LOGIN and the SQLCMDPASSWORD environment variable instead of -E for a
  SQL login.

PowerShell (SqlServer module):
  Invoke-Sqlcmd -ServerInstance SERVER -Database msdb -InputFile .\restore_history_export.sql |
    Export-Csv -Path history.csv -NoTypeInformation -Encoding UTF8
  Windows PowerShell 5 writes a "#TYPE" first line without -NoTypeInformation,
  and may be given -Encoding Unicode (UTF-16); the importer accepts both. Set
  @quote_text = 0 for tidy values, although the importer strips the doubled
  quotes of @quote_text = 1 too.

SSMS: run with Results to Grid, then right-click the grid, "Save Results As...",
CSV. Under Tools > Options > Query Results > SQL Server > Results to Grid, turn
"Include column headers when copying or saving the results" on (the importer
needs the header; it takes effect in new query windows) and leave "Quote
strings containing list separators when saving .csv results" off: this query
already quotes.

Dates are CONVERT(..., 121), i.e. yyyy-mm-dd hh:mi:ss.mmm in the instance's
local time. LSNs and sizes are exported as decimal text so no client can turn
them into floats. Bits are exported as 0/1.
*/
SET NOCOUNT ON;

DECLARE @since datetime = '19000101';
DECLARE @quote_text bit = 1;

-- backupset.key_algorithm came with backup encryption in SQL Server 2014. A
-- column the server lacks fails the whole batch as it compiles ("Invalid
-- column name"), even under an IF that is false, so it is read by dynamic SQL,
-- compiled only where COL_LENGTH finds the column, into a table variable: one
-- row per backup set restored since @since. Elsewhere key_algorithm is NULL.
DECLARE @key_algorithm TABLE (backup_set_id int PRIMARY KEY, key_algorithm nvarchar(32));
IF COL_LENGTH(N'msdb.dbo.backupset', N'key_algorithm') IS NOT NULL
    INSERT INTO @key_algorithm (backup_set_id, key_algorithm)
    EXEC sys.sp_executesql
        N'SELECT bs.backup_set_id, bs.key_algorithm
          FROM msdb.dbo.backupset AS bs
          WHERE bs.backup_set_id IN (SELECT rh.backup_set_id FROM msdb.dbo.restorehistory AS rh
                                     WHERE rh.restore_date >= @since)',
        N'@since datetime', @since;

SELECT
    CASE WHEN @quote_text = 1 THEN N'"' + REPLACE(x.instance, N'"', N'""') + N'"' ELSE x.instance END AS instance,
    rh.restore_history_id AS restore_history_id,
    CONVERT(varchar(23), rh.restore_date, 121) AS restore_date,
    CASE WHEN @quote_text = 1 THEN N'"' + REPLACE(rh.destination_database_name, N'"', N'""') + N'"' ELSE rh.destination_database_name END AS destination_database_name,
    CASE WHEN @quote_text = 1 THEN N'"' + REPLACE(rh.user_name, N'"', N'""') + N'"' ELSE rh.user_name END AS user_name,
    rh.restore_type AS restore_type,
    CONVERT(tinyint, rh.[replace]) AS [replace],
    CONVERT(tinyint, rh.[recovery]) AS [recovery],
    CONVERT(varchar(23), rh.stop_at, 121) AS stop_at,
    rh.device_count AS device_count,
    CONVERT(char(36), bs.backup_set_uuid) AS backup_set_uuid,
    CONVERT(char(36), bs.family_guid) AS family_guid,
    CASE WHEN @quote_text = 1 THEN N'"' + REPLACE(bs.server_name, N'"', N'""') + N'"' ELSE bs.server_name END AS source_server_name,
    CASE WHEN @quote_text = 1 THEN N'"' + REPLACE(bs.machine_name, N'"', N'""') + N'"' ELSE bs.machine_name END AS source_machine_name,
    CASE WHEN @quote_text = 1 THEN N'"' + REPLACE(bs.database_name, N'"', N'""') + N'"' ELSE bs.database_name END AS source_database_name,
    bs.[type] AS backup_type,
    CONVERT(varchar(23), bs.backup_start_date, 121) AS backup_start_date,
    CONVERT(varchar(23), bs.backup_finish_date, 121) AS backup_finish_date,
    CONVERT(varchar(25), bs.first_lsn) AS first_lsn,
    CONVERT(varchar(25), bs.last_lsn) AS last_lsn,
    CONVERT(varchar(20), bs.backup_size) AS backup_size,
    CONVERT(varchar(20), bs.compressed_backup_size) AS compressed_backup_size,
    bs.software_major_version AS software_major_version,
    bs.software_minor_version AS software_minor_version,
    bs.software_build_version AS software_build_version,
    CONVERT(tinyint, bs.is_copy_only) AS is_copy_only,
    CONVERT(tinyint, bs.has_backup_checksums) AS has_backup_checksums,
    CASE WHEN @quote_text = 1 THEN N'"' + REPLACE(ka.key_algorithm, N'"', N'""') + N'"' ELSE ka.key_algorithm END AS key_algorithm,
    bms.media_family_count AS media_family_count,
    f1.device_type AS device_type,
    CASE WHEN @quote_text = 1 THEN N'"' + REPLACE(dev.names, N'"', N'""') + N'"' ELSE dev.names END AS physical_device_names,
    CASE WHEN @quote_text = 1 THEN N'"' + REPLACE(dst.names, N'"', N'""') + N'"' ELSE dst.names END AS destination_files
FROM msdb.dbo.restorehistory AS rh
LEFT JOIN msdb.dbo.backupset AS bs
    ON bs.backup_set_id = rh.backup_set_id
LEFT JOIN msdb.dbo.backupmediaset AS bms
    ON bms.media_set_id = bs.media_set_id
LEFT JOIN @key_algorithm AS ka
    ON ka.backup_set_id = bs.backup_set_id
-- @@SERVERNAME is NULL when sp_addserver was never run; fall back to what the
-- server calls itself.
CROSS APPLY (
    SELECT COALESCE(@@SERVERNAME, CONVERT(nvarchar(128), SERVERPROPERTY('ServerName'))) AS instance
) AS x
-- The first family (stripe) of the media set says what kind of device the
-- backup was on; mirrors repeat the families, so only mirror 0 counts.
OUTER APPLY (
    SELECT TOP (1) bmf.device_type
    FROM msdb.dbo.backupmediafamily AS bmf
    WHERE bmf.media_set_id = bs.media_set_id AND bmf.mirror = 0
    ORDER BY bmf.family_sequence_number
) AS f1
-- Every stripe's path, '|'-joined in stripe order. FOR XML PATH('') with TYPE
-- and .value() concatenates without escaping & and < as entities. The list is
-- converted to nvarchar(3998) (cutting a 64-stripe list of very long paths) so
-- that, quoted, it still fits nvarchar(4000): sqlcmd -W shows no max type in
-- full. Windows paths and URLs hold no '"', so quoting adds just the two.
OUTER APPLY (
    SELECT CONVERT(nvarchar(3998), STUFF((
        SELECT N'|' + bmf.physical_device_name
        FROM msdb.dbo.backupmediafamily AS bmf
        WHERE bmf.media_set_id = bs.media_set_id AND bmf.mirror = 0
        ORDER BY bmf.family_sequence_number
        FOR XML PATH(''), TYPE
    ).value('.', 'nvarchar(max)'), 1, 1, N'')) AS names
) AS dev
-- Where the restore put each database file (restorefile, one row per file),
-- '|'-joined in file order: destination_phys_name, prefixed with
-- destination_phys_drive when the name carries no drive or root of its own.
OUTER APPLY (
    SELECT CONVERT(nvarchar(3998), STUFF((
        SELECT N'|' + CASE
            WHEN rf.destination_phys_name LIKE N'_:%' OR rf.destination_phys_name LIKE N'\\%'
                OR rf.destination_phys_name LIKE N'/%' OR rf.destination_phys_drive IS NULL
                THEN rf.destination_phys_name
            ELSE rf.destination_phys_drive + rf.destination_phys_name END
        FROM msdb.dbo.restorefile AS rf
        WHERE rf.restore_history_id = rh.restore_history_id AND rf.destination_phys_name IS NOT NULL
        ORDER BY rf.file_number
        FOR XML PATH(''), TYPE
    ).value('.', 'nvarchar(max)'), 1, 1, N'')) AS names
) AS dst
WHERE rh.restore_date >= @since
ORDER BY rh.restore_history_id;
