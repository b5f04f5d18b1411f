-- Each unit's failed attempts: a final failure, a failure sent back for a
-- retry, a lease that expired. number is the unit's lifetime attempt count
-- at the failure, try its try number within the retry budget it counted in
-- (0: an expired lease, counted in none), at microseconds since the epoch,
-- run_id the run that claimed the unit (NULL: a worker). The store keeps
-- each unit's newest 20 and drops the rest in the transaction that logs a
-- new one; deleting a unit deletes its history.
CREATE TABLE "attempts" (
    "unit_id" INTEGER NOT NULL REFERENCES "units" ("id") ON DELETE CASCADE,
    "number"  INTEGER NOT NULL,
    "try"     INTEGER NOT NULL,
    "error"   TEXT    NOT NULL,
    "at"      INTEGER NOT NULL,
    "run_id"  INTEGER,
    PRIMARY KEY ("unit_id", "number")
) WITHOUT ROWID;
