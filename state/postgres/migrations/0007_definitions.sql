-- Every definition a model has been registered with, by definition
-- fingerprint, with the time it was first seen: what lets 'why' say what
-- changed since an outdated unit was built (the models table keeps only the
-- current definition). Registration adds a row for a fingerprint it has not
-- kept yet; rows are never removed.
CREATE TABLE {schema}.definitions (
    env         text        NOT NULL,
    model       text        NOT NULL,
    fingerprint text        NOT NULL,
    -- json, not jsonb: the definition comes back byte for byte.
    definition  json        NOT NULL,
    first_seen  timestamptz NOT NULL,
    PRIMARY KEY (env, model, fingerprint)
);
