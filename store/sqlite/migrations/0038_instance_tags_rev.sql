-- A change of an instance's configured tags alone (env, team, rto: the
-- overview's RTO targets and the instances page show them) must move the
-- warehouse's data version, or the dashboard keeps serving pages cached
-- with the old ones. SetInstanceTags counts the changes here (setting the
-- same tags again, as every collector pass does, counts none) and
-- DataVersion sums the counts.
ALTER TABLE instance ADD COLUMN tags_rev INTEGER NOT NULL DEFAULT 0;
