-- How many applied units each model has per definition fingerprint ('' is
-- unknown): outdated counts for every model are then one read of a few
-- rows per model instead of a grouped scan of every applied unit (0.5 s at
-- a million). Every transition that moves units into or out of applied, or
-- splits or deletes applied units, adds its deltas in its own transaction,
-- after the change feed's lock (feed.go), so the counts commit with the
-- units and two transactions never wait on each other's count rows. A count
-- that reaches 0 stays as a row of 0; reads skip it.
CREATE TABLE {schema}.applied_counts (
    env         text   NOT NULL,
    model       text   NOT NULL,
    fingerprint text   NOT NULL,
    units       bigint NOT NULL,
    PRIMARY KEY (env, model, fingerprint)
);

INSERT INTO {schema}.applied_counts (env, model, fingerprint, units)
SELECT env, model, coalesce(fingerprint, ''), count(*) FROM {schema}.units WHERE status = 'applied'
GROUP BY env, model, coalesce(fingerprint, '');
