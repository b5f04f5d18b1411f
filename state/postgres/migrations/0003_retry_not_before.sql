-- A failed unit waiting for its retry: pending, with the time before
-- which no claim may take it (NULL: now).
ALTER TABLE {schema}.units ADD COLUMN not_before timestamptz;
