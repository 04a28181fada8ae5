/*
agent_history.sql - restorewatch live collector, source "agent" (SPEC 3.1)

SQL Agent job steps whose output holds a 3014 line ("RESTORE DATABASE
successfully processed N pages in X seconds"): restore jobs and T-SQL log
shipping steps. The step's run_duration bounds the restore's duration from
above. Read-only; needs SELECT on msdb.dbo.sysjobhistory and sysjobs
(db_datareader in msdb; SQLAgentReaderRole shows only the login's own jobs).

Two queries, each starting at a "-- restorewatch:" marker line, run one at a
time through sp_executesql. To run them in SSMS, uncomment and edit:
-- DECLARE @watermark int = 0, @upto int = 2147483647, @batch int = 1000;
*/

-- restorewatch:agent_history/check
-- instance_id is an identity too: a rebuilt msdb restarts it (see
-- restore_history.sql). Agent purges its history by row count, so old rows
-- vanishing is normal.
SELECT
    (SELECT MIN(h.instance_id) FROM msdb.dbo.sysjobhistory AS h) AS min_id,
    (SELECT MAX(h.instance_id) FROM msdb.dbo.sysjobhistory AS h) AS max_id;

-- restorewatch:agent_history/rows
-- run_date is yyyymmdd, run_time hhmmss and run_duration hhmmss as integers
-- (run_duration 13502 = 1 h 35 min 02 s; 100 h and more spill into more
-- digits). message is nvarchar(4000) and Agent cuts long output.
SELECT TOP (@batch)
    h.instance_id,
    j.name AS job_name,
    h.step_id,
    h.step_name,
    h.run_status,                         -- 0 failed, 1 succeeded, 2 retry, 3 canceled
    h.run_date,
    h.run_time,
    h.run_duration,
    h.[message]
FROM msdb.dbo.sysjobhistory AS h
LEFT JOIN msdb.dbo.sysjobs AS j
    ON j.job_id = h.job_id
WHERE h.instance_id > @watermark
  AND h.instance_id <= @upto
  AND h.step_id > 0                       -- step 0 is the job outcome
  AND h.[message] LIKE N'%successfully processed%'
  AND h.[message] LIKE N'%RESTORE%'
ORDER BY h.instance_id;
