/*
inflight.sql - restorewatch live collector, source "inflight" (SPEC 3.1)

Restores running now, sampled every inflight_interval while one runs, so the
progress curve of a long restore is kept. Needs VIEW SERVER STATE (without
it a login sees only its own requests). No parameters; paste into SSMS as is.

- start_time is when the RESTORE statement started: its true start, which
  msdb does not record.
- percent_complete reaches 100 at the end of the data copy; redo and undo
  can run on for a long time at 100.
- estimated_completion_time is documented as internal; it is milliseconds.
- database_id is the session's current database (master, usually), not the
  one being restored: the collector reads the target from the statement and
  keeps DB_NAME(database_id) only as a fallback.
*/

-- restorewatch:inflight
SELECT
    r.session_id,
    r.start_time,
    r.command,                            -- RESTORE DATABASE, RESTORE LOG, RESTORE HEADERON...
    r.[status],
    DB_NAME(r.database_id) AS context_database,
    r.percent_complete,
    r.estimated_completion_time,
    r.wait_type,                          -- PREEMPTIVE_OS_WRITEFILEGATHER = zeroing files without IFI
    SUBSTRING(t.[text], r.statement_start_offset / 2 + 1,
        (CASE WHEN r.statement_end_offset = -1 THEN DATALENGTH(t.[text])
              ELSE r.statement_end_offset END - r.statement_start_offset) / 2 + 1) AS statement_text,
    SYSDATETIMEOFFSET() AS sampled_at
FROM sys.dm_exec_requests AS r
OUTER APPLY sys.dm_exec_sql_text(r.[sql_handle]) AS t
WHERE r.command LIKE N'RESTORE%'
ORDER BY r.session_id;
