-- The failed units, and the pending units that carry a not-before time (a
-- failed attempt waiting for its retry, or a unit released unrun to wait
-- for upstream work under way), of each model in window order: what a
-- failed root of the incidents report is made of (stuck.go, FailingUnits,
-- issue 33). Read from here, a model that retries no longer costs a scan
-- of its whole pending backlog to find the few that wait, and the failed
-- units are not picked out of the blocked ones units_stuck also holds.
-- Partial, so it holds a few rows of millions; its condition is repeated
-- word for word by the statement that reads it, as SQLite needs.
CREATE INDEX "units_failing" ON "units" ("model_id", "since", "until") WHERE "status" = 'failed' OR ("status" = 'pending' AND "not_before" IS NOT NULL);
