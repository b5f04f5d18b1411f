-- What the gate sweep (SweepGate) reads, from indexes alone and in window
-- order: the units that are not applied, and the applied rows of the
-- models some gate reads row by row (the coverage table holds the islands
-- of the others). Each unit sits in one of the two. Both carry status:
-- SQLite reads an index as covering only when it holds every column the
-- statement names, its partial WHERE's included.
CREATE INDEX "units_sweep_outstanding" ON "units" ("model_id", "since", "until", "status") WHERE "status" <> 'applied';
CREATE INDEX "units_sweep_applied" ON "units" ("model_id", "since", "until", "applied_at", "status") WHERE "status" = 'applied';
