-- The blocked and failed units of each model in window order, for the
-- grouped and paged stuck reads (stuck.go, issue 33): `bollhav blocked`
-- counts them by model and reason and pages a model's of them by
-- (since, until) instead of reading every blocked unit of the store. The
-- index is partial, so it holds only the stuck units, a few of millions,
-- and a unit moving in or out of it costs one entry. Built CONCURRENTLY
-- (issue 35): an upgrade of a large store does not hold back workers'
-- writes for the build; a new store's is a plain build (migrate_index.go).
CREATE INDEX CONCURRENTLY units_stuck ON {schema}.units (env, model, since, until) WHERE status IN ('blocked', 'failed');
