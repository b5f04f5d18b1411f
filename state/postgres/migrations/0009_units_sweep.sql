-- What the gate sweep (SweepGate) reads, in window order, from indexes
-- alone: the units that are not applied, and the applied rows of the
-- models some gate reads, each an index-only scan of under 80 bytes a unit
-- where the heap holds 300, and no sort. Each unit version sits in one of
-- the two, so together they cost one index entry per version; status is
-- already in units_status, so a status change was never a HOT update.
-- Both built CONCURRENTLY (issue 35): an upgrade of a large store does not
-- hold back workers' writes for the builds; a new store's are plain builds
-- (migrate_index.go). Stores that applied this file before it said so hold
-- the same indexes.
CREATE INDEX CONCURRENTLY units_sweep_outstanding ON {schema}.units (env, model, since, until) INCLUDE (status) WHERE status <> 'applied';
CREATE INDEX CONCURRENTLY units_sweep_applied ON {schema}.units (env, model, since, until) INCLUDE (applied_at) WHERE status = 'applied';
