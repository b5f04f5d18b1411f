-- 0001: the state store's first schema. {schema} is the store's schema,
-- quoted; the runner creates it and the schema_version table first.

-- btree_gist lets one GiST index hold the plain env/model columns beside the
-- window range, which the exclusion constraint on running units needs. It is
-- installed in public, never in the store's schema: dropping a store's
-- schema must not take the extension, and with it the constraints of every
-- other store in the database, along.
CREATE EXTENSION IF NOT EXISTS btree_gist SCHEMA public;

-- The registry: one row per model per environment ('' is production).
CREATE TABLE {schema}.models (
    env           text        NOT NULL,
    name          text        NOT NULL,
    task_id       integer     NOT NULL CHECK (task_id > 0),
    pipeline      text        NOT NULL,
    temporality   text        NOT NULL,
    flexibility   text        NOT NULL,
    grain         text        NOT NULL,
    timezone      text        NOT NULL,
    start_at      timestamptz,
    end_at        timestamptz,
    -- json, not jsonb: the definition comes back byte for byte.
    definition    json,
    content_hash  text        NOT NULL,
    registered_at timestamptz NOT NULL,
    -- The longest unit the model ever had, in microseconds; Prefill raises
    -- it, nothing lowers it. A unit overlapping [s, e) then starts in
    -- [s - longest_unit, e), a bounded btree range, so windowed reads of
    -- units in any status need no GiST index over every unit (which would
    -- make a prefill several times slower).
    longest_unit  bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (env, name),
    UNIQUE (env, task_id)
);

CREATE TABLE {schema}.edges (
    env            text    NOT NULL,
    task           text    NOT NULL,
    depends_on     text    NOT NULL,
    type           text    NOT NULL,
    implicit       boolean NOT NULL,
    cross_pipeline boolean NOT NULL,
    PRIMARY KEY (env, task, depends_on, type)
);

-- Fencing tokens: one sequence for the whole store, so every claim's fence
-- is larger than any fence the unit had before.
CREATE SEQUENCE {schema}.fences;

-- Units: one row per fixed grid window, per covered unit of a flexible model,
-- or the existence row of a timeless model (since, until and span NULL).
CREATE TABLE {schema}.units (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    env            text        NOT NULL,
    model          text        NOT NULL,
    -- Copied from the model's registration: an exclusion constraint can only
    -- look at its own row.
    flexible       boolean     NOT NULL,
    since          timestamptz,
    until          timestamptz,
    span           tstzrange   GENERATED ALWAYS AS (
                       CASE WHEN since IS NULL THEN NULL ELSE tstzrange(since, until, '[)') END
                   ) STORED,
    status         text        NOT NULL,
    applied_at     timestamptz,
    blocked_reason text        NOT NULL DEFAULT '',
    error          text        NOT NULL DEFAULT '',
    attempts       integer     NOT NULL DEFAULT 0,
    run_id         bigint      NOT NULL DEFAULT 0,
    lease_owner    text        NOT NULL DEFAULT '',
    lease_until    timestamptz,
    fence          bigint      NOT NULL DEFAULT 0,
    rows_written   bigint,
    updated_at     timestamptz NOT NULL,
    -- No foreign key to models: its per-row check would cost a prefill of
    -- 100,000 windows a second, and every call that creates units already
    -- reads the model's registration in its transaction. Models are never
    -- deleted.
    CONSTRAINT units_status_known CHECK (status IN ('pending', 'running', 'applied', 'blocked', 'failed')),
    CONSTRAINT units_bounds_together CHECK ((since IS NULL) = (until IS NULL)),
    -- An empty range overlaps nothing, so it would slip past && and the
    -- exclusion constraint below.
    CONSTRAINT units_span_not_empty CHECK (NOT isempty(span)),
    CONSTRAINT units_applied_at CHECK ((status = 'applied') = (applied_at IS NOT NULL)),
    CONSTRAINT units_lease CHECK ((status = 'running') = (lease_until IS NOT NULL)),
    -- Two running units of one flexible model never overlap.
    CONSTRAINT units_running_no_overlap EXCLUDE USING gist (env WITH =, model WITH =, span WITH &&)
        WHERE (status = 'running' AND flexible)
);

-- Units are keyed by (env, model, window); the existence row, whose bounds
-- are NULL, by (env, model). This index also streams a model's units in
-- window order and finds the units overlapping a window (models.longest_unit
-- bounds the range of since to read).
CREATE UNIQUE INDEX units_window_key ON {schema}.units (env, model, since, until);
CREATE UNIQUE INDEX units_existence_key ON {schema}.units (env, model) WHERE since IS NULL;
-- Applied windows touching a window: what the gate reads (applied rows,
-- coverage, holes before u), by range. Only applied units: a GiST insert
-- costs several btree inserts, and prefill writes pending units by the
-- hundred thousand.
CREATE INDEX units_applied_span ON {schema}.units USING gist (env, model, span) WHERE status = 'applied';
-- A model's units of one status in window order: claims take the oldest
-- pending first, and "is anything before u not applied" stops at the first.
CREATE INDEX units_status ON {schema}.units (env, model, status, since);
-- Expired leases, without looking at units that are not running.
CREATE INDEX units_lease_until ON {schema}.units (lease_until) WHERE status = 'running';

-- The change feed. seq is handed out under a lock held to commit, so it
-- increases in commit order.
CREATE TABLE {schema}.changes (
    seq         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    env         text        NOT NULL,
    model       text        NOT NULL,
    since       timestamptz,
    until       timestamptz,
    from_status text        NOT NULL,
    to_status   text        NOT NULL,
    count       integer     NOT NULL,
    at          timestamptz NOT NULL,
    run_id      bigint      NOT NULL DEFAULT 0
);

CREATE TABLE {schema}.runs (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    env         text        NOT NULL,
    pipeline    text        NOT NULL,
    models      text[]      NOT NULL,
    since       timestamptz,
    until       timestamptz,
    state_mode  text        NOT NULL,
    status      text        NOT NULL,
    actor       text        NOT NULL,
    started_at  timestamptz NOT NULL,
    finished_at timestamptz
);
CREATE INDEX runs_newest ON {schema}.runs (env, started_at DESC, id DESC);

-- Seed 002's AUD_TASK_RUN_LOG: one row per attempt of a task under a run.
CREATE TABLE {schema}.task_runs (
    run_id       bigint      NOT NULL REFERENCES {schema}.runs (id),
    task_id      integer     NOT NULL,
    attempt      integer     NOT NULL CHECK (attempt > 0),
    status       text        NOT NULL,
    started_at   timestamptz NOT NULL,
    finished_at  timestamptz,
    rows_written bigint,
    target_count bigint,
    error        text        NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, task_id, attempt)
);

CREATE TABLE {schema}.audit (
    id      bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at      timestamptz NOT NULL,
    actor   text        NOT NULL,
    action  text        NOT NULL,
    args    jsonb,
    outcome text        NOT NULL
);
