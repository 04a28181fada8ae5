-- Where each restore put the database's files: msdb.dbo.restorefile's
-- destination paths (drive and name), as a JSON list. '[]' where the source
-- did not say (error logs, older exports).
ALTER TABLE history_row ADD COLUMN destination_files TEXT NOT NULL DEFAULT '[]';
ALTER TABLE restore ADD COLUMN destination_files TEXT;
