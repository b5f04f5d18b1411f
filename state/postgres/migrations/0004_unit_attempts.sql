-- Each unit's failed attempts: a final failure, a failure sent back for a
-- retry, a lease that expired. number is the unit's lifetime attempt count
-- at the failure, try its try number within the retry budget it counted in
-- (0: an expired lease, counted in none), run_id the run that claimed the
-- unit (NULL: a worker). The store keeps each unit's newest 20 and drops
-- the rest in the transaction that logs a new one.
--
-- No foreign key to units: its per-row cascade would cost a torch of
-- 100,000 units as many lookups; Delete and Uncover drop the history of
-- the units they remove in the same statement instead.
CREATE TABLE {schema}.attempts (
    unit_id bigint      NOT NULL,
    number  integer     NOT NULL,
    try     integer     NOT NULL,
    error   text        NOT NULL,
    at      timestamptz NOT NULL,
    run_id  bigint,
    PRIMARY KEY (unit_id, number)
);
