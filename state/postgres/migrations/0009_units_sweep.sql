-- The gate sweep (SweepGate) reads window, status and applied_at of the
-- units it needs in window order from this index alone: an index-only scan
-- of about 80 bytes a unit instead of the heap's 300, and no sort. It costs
-- one more index entry per unit version; status is already in units_status,
-- so a status change was never a HOT update and loses nothing more.
CREATE INDEX units_sweep ON {schema}.units (env, model, since, until) INCLUDE (status, applied_at);
