-- A run's heartbeat: when its process last said it was alive, on the
-- engine's lease clock. A running run whose heartbeat is older than a
-- lease and that holds no live lease is closed as abandoned by whoever
-- rescues leases (docs/semantics.md, "Runs and other workers"). Runs
-- recorded before this read their started_at.
ALTER TABLE {schema}.runs ADD COLUMN heartbeat_at timestamptz;
-- Both built CONCURRENTLY (issue 35): an upgrade of a large store does not
-- hold back workers' writes for the builds; a new store's are plain builds
-- (migrate_index.go). On an upgrade they run before the ALTER TABLE above,
-- and read nothing it adds. Stores that applied this file before it said
-- so hold the same indexes.
CREATE INDEX CONCURRENTLY runs_running ON {schema}.runs (env) WHERE status = 'running';
-- A run's units running under a lease: what says a run still holds one.
CREATE INDEX CONCURRENTLY units_running_run ON {schema}.units (run_id) WHERE status = 'running';
