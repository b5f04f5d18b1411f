-- The stuck units of each model again, in the order the grouped stuck read
-- counts them by (status, then stored reason) and carrying the columns it
-- takes: that read then walks this index once and counts each group as it
-- passes, where over units_stuck (in window order) it sorted every blocked
-- unit in a temporary B-tree first — 0.67 s of 0.70 at 10M units, against
-- 0.24 for the walk (docs/BENCHMARKS.md). units_stuck stays for the paged
-- read, which seeks by window. Partial, as units_stuck is: a unit costs an
-- entry only while it is blocked or failed. Its condition is repeated word
-- for word by the statement that reads it.
CREATE INDEX "units_stuck_groups" ON "units" ("model_id", "status", "blocked_reason", "since", "until", "updated_at") WHERE "status" IN ('blocked', 'failed');
