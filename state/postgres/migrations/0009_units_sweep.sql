-- What the gate sweep (SweepGate) reads, in window order, from indexes
-- alone: the units that are not applied, and the applied rows of the
-- models some gate reads, each an index-only scan of under 80 bytes a unit
-- where the heap holds 300, and no sort. Each unit version sits in one of
-- the two, so together they cost one index entry per version; status is
-- already in units_status, so a status change was never a HOT update.
CREATE INDEX units_sweep_outstanding ON {schema}.units (env, model, since, until) INCLUDE (status) WHERE status <> 'applied';
CREATE INDEX units_sweep_applied ON {schema}.units (env, model, since, until) INCLUDE (applied_at) WHERE status = 'applied';
