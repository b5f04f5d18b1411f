-- Table loads of model data (hardcoded constants, file sources) and the
-- version each target was last loaded with, so a constant is re-applied
-- only when its content hash changes.
CREATE TABLE "data_loads" (
    "target"    TEXT    PRIMARY KEY,
    "version"   TEXT    NOT NULL,
    "rows"      INTEGER NOT NULL,
    "loaded_at" INTEGER NOT NULL
);
