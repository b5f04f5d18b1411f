-- What `status` and the Pipelines view show for every model, kept instead
-- of computed per read (issue 21): a grouped count over 1,000 models ×
-- 1,000 units took 0.23–0.49 s and a grouped range_agg coverage 0.8–3 s,
-- far over the view's 50 ms. Like applied_counts (0006), both tables are
-- changed by every transition in its own transaction, in the statement
-- that appends it to the change feed (summary.go), not by triggers.

-- Units per model and status, and on the applied row the newest
-- applied_at. A count that reaches 0 stays as a row of 0; reads skip it.
CREATE TABLE {schema}.status_counts (
    env    text        NOT NULL,
    model  text        NOT NULL,
    status text        NOT NULL,
    units  bigint      NOT NULL,
    newest timestamptz,
    PRIMARY KEY (env, model, status)
);

-- A model's coverage as disjoint islands that do not touch: the union of
-- its applied windows, rebuilt within the windows a transition touched.
-- No key on (env, model, since): a rebuild deletes and inserts islands in
-- one statement, where a key could see the new island before the old one
-- is gone. Islands are disjoint, so until orders them as since does.
CREATE TABLE {schema}.coverage (
    env   text        NOT NULL,
    model text        NOT NULL,
    since timestamptz NOT NULL,
    until timestamptz NOT NULL,
    CHECK (until > since)
);
CREATE INDEX coverage_until ON {schema}.coverage (env, model, until);

INSERT INTO {schema}.status_counts (env, model, status, units, newest)
SELECT env, model, status, count(*), CASE WHEN status = 'applied' THEN max(applied_at) END
FROM {schema}.units GROUP BY env, model, status;

INSERT INTO {schema}.coverage (env, model, since, until)
SELECT a.env, a.model, lower(r), upper(r)
FROM (SELECT env, model, range_agg(span) AS m FROM {schema}.units
      WHERE status = 'applied' AND span IS NOT NULL GROUP BY env, model) a,
     unnest(a.m) AS r;
