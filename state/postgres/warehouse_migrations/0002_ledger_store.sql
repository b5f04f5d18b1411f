-- Which state store wrote each ledger row, under which definition, and the
-- unit's window as columns of its own (docs/semantics.md, "Exactly once
-- across two databases"). A unit key names a unit by the store's unit id,
-- which another store hands out again, so fences are compared only within
-- one store, a commit of another store (or another definition) is never
-- replayed, and a claim looks at every row of another store that overlaps
-- its window, whatever its key. Rows from before this migration get the
-- store '' and the fingerprint '': another store's, which is safe — they
-- are never replayed.
ALTER TABLE {schema}.ledger
    ADD COLUMN env         text,
    ADD COLUMN model       text,
    ADD COLUMN since       timestamptz,
    ADD COLUMN until       timestamptz,
    ADD COLUMN store_id    text NOT NULL DEFAULT '',
    ADD COLUMN fingerprint text NOT NULL DEFAULT '';

-- The key is env|model|since|until|#id, or env|model|#id for a timeless unit.
UPDATE {schema}.ledger SET
    env   = split_part(unit_key, '|', 1),
    model = split_part(unit_key, '|', 2),
    since = CASE WHEN cardinality(string_to_array(unit_key, '|')) = 5 THEN split_part(unit_key, '|', 3)::timestamptz END,
    until = CASE WHEN cardinality(string_to_array(unit_key, '|')) = 5 THEN split_part(unit_key, '|', 4)::timestamptz END;

ALTER TABLE {schema}.ledger ALTER COLUMN env SET NOT NULL, ALTER COLUMN model SET NOT NULL;

-- The rows overlapping a window, of any model (a core GiST index: the
-- warehouse may not allow btree_gist), filtered by env and model after;
-- a timeless unit's row by its model.
CREATE INDEX ledger_window ON {schema}.ledger USING gist (tstzrange(since, until)) WHERE since IS NOT NULL;
CREATE INDEX ledger_model ON {schema}.ledger (model, env);
