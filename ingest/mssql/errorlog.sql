/*
errorlog.sql - restorewatch live collector, source "errorlog" (SPEC 3.1)

Reads the SQL Server error log (current and archived files) through the
extended procedure xp_readerrorlog, restricted on the server to a time
window. Permission: VIEW SERVER STATE on SQL Server 2008 R2 to 2019, VIEW ANY
ERROR LOG on 2022 and later (see permissions.sql). sp_readerrorlog is not
used: on some builds it insists on membership of securityadmin.

Why no text filter: xp_readerrorlog can filter on two search strings, but a
restore is told by several neighbouring lines - the completion line (18267,
18271, 18268, 18269, 18277) and the 3014 line from the Backup source, the
4356/3421 lines, and, with trace flags 3213/3004, the buffer block and phase
lines the restoring session (spidNN) writes before them, whose labels share
no word. One filtered call per search string would return them as separate
sets that cannot be put back in log order within a second. So each log file
is read once per pass, unfiltered but bounded: only the window since the
collector's watermark (@since .. @until), oldest first, and the collector
stops reading after a fixed number of rows per pass and continues from there
on the next pass.

Two queries, each starting at a "-- restorewatch:" marker line, run one at a
time through sp_executesql. To run them in SSMS, uncomment and edit:
-- DECLARE @lognum int = 0, @since datetime = '20260101', @until datetime = '99991231';
*/

-- restorewatch:errorlog/archives
-- One row per log file: Archive # (0 = current), Date (last written, local
-- time) and Log File Size (Byte). The collector reads every file written
-- since its watermark, oldest first.
EXEC master.dbo.xp_enumerrorlogs 1;

-- restorewatch:errorlog/read
-- LogDate (datetime, local time), ProcessInfo (Server, Backup, Logon,
-- spidNN, spidNNs) and Text, one row per line; a multi-line entry (startup
-- banner, startup parameters) comes back as several rows with the same
-- LogDate and ProcessInfo, or as one row with embedded line breaks.
-- Arguments: log number, 1 = SQL Server (2 = Agent), two search strings
-- (NULL = none), start and end time, sort order.
DECLARE @log_since datetime = @since, @log_until datetime = @until;
EXEC master.dbo.xp_readerrorlog @lognum, 1, NULL, NULL, @log_since, @log_until, N'asc';
