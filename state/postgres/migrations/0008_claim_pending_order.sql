-- Pending units in claim order (oldest window first). A claim naming more
-- models than the per-model read takes, or none, reads candidates in this
-- order and stops after its limit instead of sorting the environment's
-- whole backlog: 2.2 s a claim at 1,000 models × 1,000 pending units
-- before, see docs/BENCHMARKS.md. The index is partial, so applied history
-- (most rows) costs it nothing.
CREATE INDEX units_pending_claim_order ON {schema}.units (env, since, until, model, id) WHERE status = 'pending';
