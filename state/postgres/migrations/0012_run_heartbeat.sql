-- A run's heartbeat: when its process last said it was alive, on the
-- engine's lease clock. A running run whose heartbeat is older than a
-- lease and that holds no live lease is closed as abandoned by whoever
-- rescues leases (docs/semantics.md, "Runs and other workers"). Runs
-- recorded before this read their started_at.
ALTER TABLE {schema}.runs ADD COLUMN heartbeat_at timestamptz;
CREATE INDEX runs_running ON {schema}.runs (env) WHERE status = 'running';
-- A run's units running under a lease: what says a run still holds one.
CREATE INDEX units_running_run ON {schema}.units (run_id) WHERE status = 'running';
