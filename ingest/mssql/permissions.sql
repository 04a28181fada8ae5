/*
permissions.sql - the login restorewatch collects with: read-only, no sysadmin.

Run as a sysadmin on every instance restorewatch collects from (and on the
CMS, see the end). It is idempotent: running it again changes nothing.

Who logs in: set @login and @kind at the top of the script.
  @kind = 'sql'      a SQL login (auth = "sql"). Replace the password; store
                     it where the collector reads it (password_env or
                     password_file), never in the configuration itself.
  @kind = 'windows'  a Windows login (auth = "windows"): the collector's
                     gMSA (N'CORP\svc-restorewatch$'), a domain service
                     account (N'CORP\svc-restorewatch'), the computer account
                     of a Windows host whose service runs as a virtual
                     account (N'CORP\COLLECTOR01$'), or a Windows group
                     holding any of them (N'CORP\SQL-Monitoring'), which lets
                     a second collector in by group membership alone.
In master and msdb the login is mapped to a database user named
restorewatch, whatever the login is called, so the grants below name that
user; the two server permissions are granted to the login itself.

What each permission unlocks, and what happens without it (the collector
degrades that source, records why in the run record, and goes on):

  VIEW SERVER STATE     sys.dm_exec_requests for every session (restores in
                        flight; without it only the login's own requests),
                        sys.dm_os_sys_info (CPU, memory, VM), sys.dm_server_services
                        (instant file initialization), sys.dm_os_loaded_modules,
                        sys.dm_os_volume_stats; availability-group membership
                        (sys.dm_hadr_database_replica_states, the group's name
                        from sys.dm_hadr_name_id_map, distributed groups told
                        apart by sys.dm_hadr_availability_replica_cluster_states),
                        read on every pass whether or not the replica backs up.
                        Per Microsoft's current sp_readerrorlog page also the
                        error log on SQL Server 2008 R2 to 2019.
  VIEW ANY ERROR LOG    the error log on SQL Server 2022 and later (the
                        permission exists only there; granted only there).
  EXECUTE on sys.xp_readerrorlog
                        older documentation and builds check this object
                        permission (or sysadmin) instead; granting it as well
                        covers both. Granted in master on sys.xp_readerrorlog,
                        the form documented for system objects (the queries
                        call it as master.dbo.xp_readerrorlog, which resolves
                        to it). Needs a user for the login in master.
  SELECT on eight msdb tables
                        restorehistory, restorefile (the files each restore
                        wrote), backupset, backupmediaset, backupmediafamily
                        (restore history); backupfile (the files of each
                        backup, for restore plans); sysjobhistory, sysjobs
                        (Agent job steps with 3014 lines). Without restorefile
                        or backupfile, where msdb's public grants were
                        revoked, the restore or backup history query fails
                        whole (Msg 229). Chosen over
                        db_datareader in msdb, which would also expose job step
                        commands and Database Mail settings that can hold
                        credentials. db_datareader works too (see below).
  nothing more          SERVERPROPERTY, @@VERSION, sys.configurations,
                        DBCC TRACESTATUS and SYSDATETIMEOFFSET() are open to
                        every login.

What is verified and what is not (no SQL Server was available while writing
this; the collector's tests run against a TDS test server that does not
check permissions):
  - VIEW SERVER STATE for the DMVs, VIEW ANY ERROR LOG on 2022+, SELECT on
    msdb tables: Microsoft documentation.
  - xp_readerrorlog with only VIEW SERVER STATE (<= 2019): documented for
    sp_readerrorlog; the older page said sysadmin only. Not tested.
  - xp_enumerrorlogs / sp_enumerrorlogs, which list the archived logs, are
    reported (third-party, not tested) to require securityadmin membership,
    which this script deliberately does not grant. Without it the collector
    finds archives by reading ERRORLOG.1, .2, ... until one is missing or
    holds nothing newer than its watermark; the run record says so. It is
    the one object the queries use that this script does not grant.
  - No permission here lets the login change anything.
*/
USE master;
SET NOCOUNT ON;

DECLARE @login sysname = N'restorewatch';  -- or N'CORP\svc-restorewatch$', N'CORP\SQL-Monitoring'
DECLARE @kind varchar(7) = 'sql';          -- 'sql' or 'windows'
DECLARE @q nvarchar(max);

IF SUSER_ID(@login) IS NULL
BEGIN
    IF @kind = 'windows'
        SET @q = N'CREATE LOGIN ' + QUOTENAME(@login) + N' FROM WINDOWS WITH DEFAULT_DATABASE = master;';
    ELSE
        -- Replace the password.
        SET @q = N'CREATE LOGIN ' + QUOTENAME(@login) + N' WITH PASSWORD = N''change me: a long random password'', '
               + N'CHECK_POLICY = ON, DEFAULT_DATABASE = master;';
    EXEC (@q);
END;

SET @q = N'GRANT VIEW SERVER STATE TO ' + QUOTENAME(@login) + N';';
EXEC (@q);

-- VIEW ANY ERROR LOG exists from SQL Server 2022 on. Whether the server
-- knows it decides, not the version number, which cannot tell Azure SQL
-- Managed Instance (it reports 12). EXEC: older engines reject the name as
-- the batch compiles.
IF EXISTS (SELECT 1 FROM sys.fn_builtin_permissions(N'SERVER') AS p
           WHERE p.permission_name = N'VIEW ANY ERROR LOG')
BEGIN
    SET @q = N'GRANT VIEW ANY ERROR LOG TO ' + QUOTENAME(@login) + N';';
    EXEC (@q);
END;

SET @q = N'CREATE USER restorewatch FOR LOGIN ' + QUOTENAME(@login) + N';';
IF DATABASE_PRINCIPAL_ID(N'restorewatch') IS NULL
    EXEC (@q);
GRANT EXECUTE ON sys.xp_readerrorlog TO restorewatch;

-- Optional: VIEW ANY DEFINITION lets sys.master_files list every database's
-- files, so the host snapshot names all volumes that hold database files,
-- and sys.availability_group_listeners show the listeners' names, so a plan
-- can be asked by listener (without it that catalog view returns no row,
-- and the collector page says so). Availability-group membership itself
-- needs only VIEW SERVER STATE.
-- GRANT VIEW ANY DEFINITION TO restorewatch;

USE msdb;
IF DATABASE_PRINCIPAL_ID(N'restorewatch') IS NULL
    EXEC (@q);
GRANT SELECT ON dbo.restorehistory TO restorewatch;
GRANT SELECT ON dbo.restorefile TO restorewatch;
GRANT SELECT ON dbo.backupset TO restorewatch;
GRANT SELECT ON dbo.backupmediaset TO restorewatch;
GRANT SELECT ON dbo.backupmediafamily TO restorewatch;
GRANT SELECT ON dbo.backupfile TO restorewatch;
GRANT SELECT ON dbo.sysjobhistory TO restorewatch;
GRANT SELECT ON dbo.sysjobs TO restorewatch;

-- The simpler alternative of SPEC 3.1, wider than needed:
-- EXEC sp_addrolemember N'db_datareader', N'restorewatch';

-- On a Central Management Server only (cms = { ... } in the configuration):
-- read the registered servers and groups, with the role or the two views.
-- EXEC sp_addrolemember N'ServerGroupReaderRole', N'restorewatch';
-- GRANT SELECT ON dbo.sysmanagement_shared_registered_servers TO restorewatch;
-- GRANT SELECT ON dbo.sysmanagement_shared_server_groups TO restorewatch;
