-- The store's identity: a random id made once, when the store is created
-- (or, for a store from an earlier bollhav, when it is upgraded), and never
-- changed. A warehouse's ledger records it with each unit it writes, so a
-- new store — or a second store sharing the warehouse — never takes
-- another store's ledger row for its own (docs/semantics.md, "Exactly once
-- across two databases"). It is a plain stored value: a copy of the store
-- keeps it.
CREATE TABLE {schema}.store_identity (
    one        boolean     PRIMARY KEY DEFAULT true CHECK (one),
    id         text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO {schema}.store_identity (id) VALUES (gen_random_uuid()::text);
