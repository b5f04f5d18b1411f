-- The definition fingerprint an applied unit was built under (engine/spec
-- Fingerprint); NULL for every other status, for a unit an operator marked
-- applied, and for units applied before this migration: unknown, never
-- outdated. Adding a nullable column rewrites nothing.
ALTER TABLE {schema}.units ADD COLUMN fingerprint text;
ALTER TABLE {schema}.units ADD CONSTRAINT units_fingerprint_applied CHECK (fingerprint IS NULL OR status = 'applied');
-- Outdated counts read applied units grouped by model and fingerprint with
-- an index-only scan of this index.
CREATE INDEX units_applied_fingerprint ON {schema}.units (env, model, fingerprint) WHERE status = 'applied';
