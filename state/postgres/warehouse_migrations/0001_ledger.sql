-- The ledger of a warehouse: one row per unit whose data bollhav wrote here.
-- The unit's data transaction writes its row with the claim's fencing token,
-- so a zombie claim (an older token) cannot commit, and a crash between the
-- warehouse's commit and the state store's leaves the proof of the data here.
CREATE TABLE {schema}.ledger (
    unit_key      text PRIMARY KEY,
    fence         bigint NOT NULL,
    done_fence    bigint NOT NULL DEFAULT 0,
    done_attempts integer NOT NULL DEFAULT 0,
    rows          bigint NOT NULL DEFAULT 0,
    done_at       timestamptz
);

-- Table loads of hardcoded and file sources into this warehouse, as the
-- state store's data_loads for models in the store's database.
CREATE TABLE {schema}.data_loads (
    target    text PRIMARY KEY,
    version   text NOT NULL,
    rows      bigint NOT NULL,
    loaded_at timestamptz NOT NULL
);
