-- analysis_pending counts the derivations of an instance's restores that no
-- analysis has judged yet: reconciliation adds one in the transaction that
-- writes the restores, and the analysis clears it in the transaction that
-- stores the instance's findings, if no derivation came in between. A crash
-- (kill -9) between the two leaves it set, and the next open of the
-- warehouse runs the analysis before anything is served (DB.CompletePending).
ALTER TABLE instance ADD COLUMN analysis_pending BIGINT NOT NULL DEFAULT 0;
-- A warehouse written before this mark existed cannot say whether an import
-- was interrupted between its derivation and its analysis: every instance is
-- judged once more at the first open.
UPDATE instance SET analysis_pending = 1;
