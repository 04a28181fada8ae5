-- throughput_source says what a restore's logical_mibps (and read_mibps)
-- were computed from: 'duration' (the size over duration_s) or
-- 'engine_mbps' (the 3014 line's own MB/sec, which the engine computes from
-- a finer clock than the milliseconds it prints: the more precise of the two
-- when the restore was short). '' when there is no throughput. Derivation
-- version 4 fills it in at the next open.
ALTER TABLE restore ADD COLUMN throughput_source TEXT NOT NULL DEFAULT '';
