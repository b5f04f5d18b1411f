-- The blocked and failed units of each model in window order, for the
-- grouped and paged stuck reads (stuck.go, issue 33): `bollhav blocked`
-- counts them by model and reason and pages a model's of them by
-- (since, until) instead of reading every blocked unit of the store. The
-- index is partial, so it holds only the stuck units, a few of millions.
-- Its condition is repeated word for word by every statement that reads
-- it: SQLite reads a partial index only for a WHERE holding its terms.
CREATE INDEX "units_stuck" ON "units" ("model_id", "since", "until") WHERE "status" IN ('blocked', 'failed');
