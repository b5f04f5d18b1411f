-- Every definition a model has been registered with, by definition
-- fingerprint, with the time it was first seen: what lets 'why' say what
-- changed since an outdated unit was built (the models table keeps only the
-- current definition). Registration adds a row for a fingerprint it has not
-- kept yet; rows are never removed while the model is registered.
CREATE TABLE "definitions" (
    "model_id"    INTEGER NOT NULL REFERENCES "models" ("id") ON DELETE CASCADE,
    "fingerprint" TEXT    NOT NULL,
    "definition"  BLOB    NOT NULL,
    "first_seen"  INTEGER NOT NULL,
    PRIMARY KEY ("model_id", "fingerprint")
) WITHOUT ROWID;
