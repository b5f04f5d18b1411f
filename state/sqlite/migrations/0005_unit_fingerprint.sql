-- The definition fingerprint an applied unit was built under (engine/spec
-- Fingerprint); NULL for every other status, for a unit an operator marked
-- applied, and for units applied before this migration: unknown, never
-- outdated.
ALTER TABLE "units" ADD COLUMN "fingerprint" TEXT;
-- Outdated counts read applied units grouped by model and fingerprint from
-- this index alone, without touching the table.
CREATE INDEX "units_applied_fingerprint" ON "units" ("model_id", "fingerprint") WHERE "status" = 'applied';
