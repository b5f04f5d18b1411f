-- How many units each model has per status, changed in the transaction of
-- every transition that inserts, deletes, splits or moves units between
-- statuses (status_counts.go), so Summaries reads a few rows per model
-- instead of counting every unit (a grouped scan of a million units is far
-- over the Pipelines view's 50 ms). Coverage is kept already (the coverage
-- table) and the newest applied_at is one seek of units_applied_at per
-- model. Not triggers, for the reason 0006 gives. A count that reaches 0
-- stays as a row of 0; reads skip it.
CREATE TABLE "status_counts" (
    "model_id" INTEGER NOT NULL REFERENCES "models" ("id") ON DELETE CASCADE,
    "status"   TEXT    NOT NULL,
    "units"    INTEGER NOT NULL,
    PRIMARY KEY ("model_id", "status")
) WITHOUT ROWID;

INSERT INTO "status_counts" ("model_id", "status", "units")
SELECT "model_id", "status", count(*) FROM "units" GROUP BY "model_id", "status";
