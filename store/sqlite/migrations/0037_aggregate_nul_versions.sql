-- Kept aggregates saved before their version parted release and data with
-- \x1f (store/keep.Sep) parted them with NUL. No release reads them (their
-- version names no release keep.DataVersionOf knows), and PostgreSQL's text
-- refuses NUL, so `restorewatch migrate` stopped at aggregate_snapshot on
-- any warehouse an older release had kept aggregates in. The next start,
-- import or analyze keeps them again.
DELETE FROM aggregate_snapshot WHERE instr(CAST(version AS BLOB), x'00') > 0;
