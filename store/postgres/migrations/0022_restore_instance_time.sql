-- An instance's restores from a time on: what a window's reconciliation
-- replaces (store/window.go: the restores anchored on or after its start).
-- Through restore_series, whose database and kind come before the time,
-- that read walked every restore of the instance: 3.7 ms for a log-shipping
-- secondary of 21,600 restores, each time one of its days was imported.
CREATE INDEX restore_instance_at ON restore (instance_id, at_utc);
