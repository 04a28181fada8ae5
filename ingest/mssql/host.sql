/*
host.sql - restorewatch live collector, source "host" (SPEC 3.1)

What the instance and its host look like now: build, edition, CPU, memory,
instant file initialization, backup defaults, trace flags, non-Microsoft DLLs
loaded into sqlservr.exe, the volumes holding database files, the UTC offset.
Each query runs on its own, so a missing permission or an older build costs
only that part of the snapshot. Queries marked (VSS) need VIEW SERVER STATE.

Each query starts at a "-- restorewatch:" marker line. A line ending in
"-- restorewatch:since N else X" is sent as X to engines older than major
version N (10 = 2008 and 2008 R2, 11 = 2012, 12 = 2014, 13 = 2016,
14 = 2017, 15 = 2019, 16 = 2022, 17 = 2025). What a service pack added, or
what Azure SQL Managed Instance (which reports version 12) has, no major
version tells: there the query asks COL_LENGTH or OBJECT_ID whether the view
or column exists, and names it only inside EXEC, which compiles its text
only when it runs (outside EXEC, a missing column fails the whole batch as
it compiles, even under an IF that is false). No parameters: every query can
be pasted into SSMS as it is.
*/

-- restorewatch:host/properties
-- SERVERPROPERTY returns sql_variant; each value is converted to a plain type.
-- ProductUpdateLevel/Reference are NULL on builds before late 2015.
SELECT
    CONVERT(nvarchar(128), SERVERPROPERTY('ProductVersion')) AS product_version,
    CONVERT(nvarchar(128), SERVERPROPERTY('ProductLevel')) AS product_level,
    CONVERT(nvarchar(128), SERVERPROPERTY('ProductUpdateLevel')) AS product_update_level,
    CONVERT(nvarchar(128), SERVERPROPERTY('ProductUpdateReference')) AS product_update_reference,
    CONVERT(nvarchar(128), SERVERPROPERTY('Edition')) AS edition,
    CONVERT(int, SERVERPROPERTY('EngineEdition')) AS engine_edition,
    CONVERT(nvarchar(128), SERVERPROPERTY('MachineName')) AS machine_name,
    CONVERT(nvarchar(128), SERVERPROPERTY('InstanceName')) AS instance_name,
    CONVERT(nvarchar(128), SERVERPROPERTY('ServerName')) AS server_name,
    CONVERT(int, SERVERPROPERTY('IsClustered')) AS is_clustered,
    CONVERT(int, SERVERPROPERTY('IsHadrEnabled')) AS is_hadr_enabled,
    @@VERSION AS version_text,
    SYSDATETIMEOFFSET() AS server_time;   -- local time and UTC offset

-- restorewatch:host/sysinfo
-- (VSS) 2008 and 2008 R2 have physical_memory_in_bytes instead of
-- physical_memory_kb. socket_count came with 2016 SP2: it is read by EXEC
-- where it exists and is NULL elsewhere.
DECLARE @sockets int;
IF COL_LENGTH(N'sys.dm_os_sys_info', N'socket_count') IS NOT NULL
    EXEC sys.sp_executesql N'SELECT @n = i.socket_count FROM sys.dm_os_sys_info AS i',
        N'@n int OUTPUT', @n = @sockets OUTPUT;
SELECT
    i.cpu_count,
    i.hyperthread_ratio,
    @sockets AS socket_count,
    i.physical_memory_kb / 1024 AS memory_mb, -- restorewatch:since 11 else i.physical_memory_in_bytes / 1048576 AS memory_mb,
    i.virtual_machine_type_desc,          -- NONE, HYPERVISOR, OTHER
    i.sqlserver_start_time
FROM sys.dm_os_sys_info AS i;

-- restorewatch:host/os
-- sys.dm_os_host_info came with 2017 (Managed Instance has it too); before
-- it, sys.dm_os_windows_info (2008 R2 SP1), which has no distribution name.
-- With neither, no row: the @@VERSION banner names the OS.
IF OBJECT_ID(N'sys.dm_os_host_info') IS NOT NULL
    EXEC (N'SELECT h.host_platform, h.host_distribution, h.host_release, h.host_service_pack_level
            FROM sys.dm_os_host_info AS h');
ELSE IF OBJECT_ID(N'sys.dm_os_windows_info') IS NOT NULL
    EXEC (N'SELECT N''Windows'' AS host_platform, CONVERT(nvarchar(256), NULL) AS host_distribution,
                   w.windows_release AS host_release, w.windows_service_pack_level AS host_service_pack_level
            FROM sys.dm_os_windows_info AS w');

-- restorewatch:host/services
-- (VSS) sys.dm_server_services came with 2008 R2 SP1, its
-- instant_file_initialization_enabled with 2012 SP4 and 2016 SP1. With no
-- view, no row.
IF COL_LENGTH(N'sys.dm_server_services', N'instant_file_initialization_enabled') IS NOT NULL
    EXEC (N'SELECT s.servicename, s.service_account, s.instant_file_initialization_enabled
            FROM sys.dm_server_services AS s WHERE s.[filename] LIKE N''%sqlservr%''');
ELSE IF OBJECT_ID(N'sys.dm_server_services') IS NOT NULL
    EXEC (N'SELECT s.servicename, s.service_account, CONVERT(nvarchar(1), NULL) AS instant_file_initialization_enabled
            FROM sys.dm_server_services AS s WHERE s.[filename] LIKE N''%sqlservr%''');

-- restorewatch:host/config
-- value_in_use is sql_variant. 'backup checksum default' exists from 2014,
-- 'backup compression algorithm' from 2022; absent names return no row.
SELECT c.name, CONVERT(bigint, c.value_in_use) AS value_in_use
FROM sys.configurations AS c
WHERE c.name IN (N'backup compression default', N'backup checksum default',
                 N'backup compression algorithm', N'max server memory (MB)');

-- restorewatch:host/traceflags
-- Global trace flags: TraceFlag, Status, Global, Session.
DBCC TRACESTATUS(-1) WITH NO_INFOMSGS;

-- restorewatch:host/modules
-- (VSS) Antivirus and filter DLLs loaded into sqlservr.exe slow restores.
SELECT m.name, m.company, m.[description], m.file_version
FROM sys.dm_os_loaded_modules AS m
WHERE m.company IS NULL OR m.company NOT LIKE N'Microsoft%'
ORDER BY m.name;

-- restorewatch:host/volumes
-- (VSS) The volumes that hold database files. sys.master_files shows every
-- database's files only with VIEW ANY DEFINITION; without it, fewer volumes,
-- and can_view_definition = 0 lets the collector say so.
-- Free space is left out on purpose: it changes every pass, and a snapshot
-- is stored only when something in it changed. sys.dm_os_volume_stats came
-- with 2008 R2 SP1; without it, no row.
IF OBJECT_ID(N'sys.dm_os_volume_stats') IS NOT NULL
    EXEC (N'SELECT DISTINCT vs.volume_mount_point, vs.file_system_type, vs.total_bytes,
                   HAS_PERMS_BY_NAME(NULL, NULL, N''VIEW ANY DEFINITION'') AS can_view_definition
            FROM sys.master_files AS mf
            CROSS APPLY sys.dm_os_volume_stats(mf.database_id, mf.[file_id]) AS vs
            ORDER BY vs.volume_mount_point');
