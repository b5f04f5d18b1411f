-- Table loads of model data (hardcoded constants, file sources) and the
-- version each target was last loaded with, so a constant is re-applied
-- only when its content hash changes.
CREATE TABLE {schema}.data_loads (
    target    text PRIMARY KEY,
    version   text NOT NULL,
    rows      bigint NOT NULL,
    loaded_at timestamptz NOT NULL
);
