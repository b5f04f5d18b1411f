-- A failed unit waiting for its retry: pending, with the time before
-- which no claim may take it (microseconds since the epoch; NULL: now).
ALTER TABLE "units" ADD COLUMN "not_before" INTEGER;
