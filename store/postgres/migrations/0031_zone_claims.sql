-- What a zone may claim about other instances (issue 40): availability-group
-- membership, a listener or a family GUID pushed by one collector merges
-- only the instances of that collector's zone into a restore plan. A merge
-- across zones needs the operator's word: the AGs a collector's token may
-- join with other zones' (and this server's own) replicas, given at
-- `token create NAME --ag AG`. A JSON array of AG names.
ALTER TABLE collector_token ADD COLUMN ags TEXT NOT NULL DEFAULT '[]';
