-- A restore seen in flight names its backup files in its statement; its size
-- is found through the backup history of those files (the knee finding's
-- MB/s before and after the knee), so the media rows are looked up by device.
CREATE INDEX backup_media_device ON backup_media (lower(physical_device_name));
