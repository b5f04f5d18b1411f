-- bollhav state store, SQLite dialect, version 1.
--
-- Every time column holds UTC unix microseconds: integers sort and index in
-- time order, cover the years 0000-9999, and keep PostgreSQL's precision, so
-- both backends round the same way. -62135596800000000 is time.Time{}: the
-- zero Window of a timeless model's existence row is (that, that), which keeps
-- (model, since, until) unique without NULLs (NULLs are never equal).

CREATE TABLE "models" (
    "id"            INTEGER PRIMARY KEY AUTOINCREMENT,
    "env"           TEXT    NOT NULL,
    "name"          TEXT    NOT NULL,
    "task_id"       INTEGER NOT NULL,
    "pipeline"      TEXT    NOT NULL,
    "temporality"   TEXT    NOT NULL,
    "flexibility"   TEXT    NOT NULL,
    "interval"      TEXT    NOT NULL,
    "timezone"      TEXT    NOT NULL,
    "start"         INTEGER,
    "end"           INTEGER,
    "definition"    BLOB    NOT NULL,
    "content_hash"  TEXT    NOT NULL,
    "registered_at" INTEGER NOT NULL,
    -- An upper bound on the length of the model's units: an overlap query
    -- seeks since in (w.since - max_unit, w.until) instead of scanning every
    -- unit that starts before w.until.
    "max_unit"      INTEGER NOT NULL DEFAULT 0,
    UNIQUE ("env", "name"),
    UNIQUE ("env", "task_id")
);

CREATE TABLE "edges" (
    "env"        TEXT    NOT NULL,
    "task"       TEXT    NOT NULL,
    "depends_on" TEXT    NOT NULL,
    "type"       TEXT    NOT NULL,
    "implicit"   INTEGER NOT NULL,
    "cross"      INTEGER NOT NULL,
    PRIMARY KEY ("env", "task", "depends_on", "type")
) WITHOUT ROWID;

-- AUTOINCREMENT: a unit id is never reused, so a worker's stale claim on a
-- deleted unit can never match a unit prefilled later.
CREATE TABLE "units" (
    "id"             INTEGER PRIMARY KEY AUTOINCREMENT,
    "model_id"       INTEGER NOT NULL REFERENCES "models" ("id") ON DELETE CASCADE,
    "since"          INTEGER NOT NULL,
    "until"          INTEGER NOT NULL,
    "status"         TEXT    NOT NULL CHECK ("status" IN ('pending', 'running', 'applied', 'blocked', 'failed')),
    "applied_at"     INTEGER,
    "blocked_reason" TEXT    NOT NULL DEFAULT '',
    "error"          TEXT    NOT NULL DEFAULT '',
    "attempts"       INTEGER NOT NULL DEFAULT 0,
    "run_id"         INTEGER NOT NULL DEFAULT 0,
    "lease_owner"    TEXT    NOT NULL DEFAULT '',
    "lease_until"    INTEGER,
    "fence"          INTEGER NOT NULL DEFAULT 0,
    "rows_written"   INTEGER,
    "updated_at"     INTEGER NOT NULL,
    -- An empty window slips past every overlap test; only the existence row
    -- may have since = until.
    CHECK ("until" > "since" OR ("since" = -62135596800000000 AND "until" = "since"))
);
-- Prefill's uniqueness, window scans in timeline order, overlap seeks.
CREATE UNIQUE INDEX "units_window" ON "units" ("model_id", "since", "until");
-- Counts by status, applied rows touching a window, claims of named models.
CREATE INDEX "units_status" ON "units" ("model_id", "status", "since");
-- Claims across every model of an environment, oldest window first.
CREATE INDEX "units_pending" ON "units" ("since") WHERE "status" = 'pending';
-- ReleaseExpired.
CREATE INDEX "units_lease" ON "units" ("lease_until") WHERE "status" = 'running';
-- Stats' newest applied_at.
CREATE INDEX "units_applied_at" ON "units" ("model_id", "applied_at") WHERE "status" = 'applied';

-- A model's coverage as disjoint, non-touching islands, kept in step with its
-- applied units in the same transaction: "is there a hole before u" is one
-- index seek, not a union over the model's whole history.
CREATE TABLE "coverage" (
    "model_id" INTEGER NOT NULL REFERENCES "models" ("id") ON DELETE CASCADE,
    "since"    INTEGER NOT NULL,
    "until"    INTEGER NOT NULL,
    PRIMARY KEY ("model_id", "since"),
    CHECK ("until" > "since")
) WITHOUT ROWID;
CREATE INDEX "coverage_until" ON "coverage" ("model_id", "until");

-- The change feed. AUTOINCREMENT: a seq is never reused, and with one writer
-- seqs commit in order, so a reader's last seq is a safe resume point.
CREATE TABLE "changes" (
    "seq"         INTEGER PRIMARY KEY AUTOINCREMENT,
    "env"         TEXT    NOT NULL,
    "model"       TEXT    NOT NULL,
    "since"       INTEGER NOT NULL,
    "until"       INTEGER NOT NULL,
    "from_status" TEXT    NOT NULL,
    "to_status"   TEXT    NOT NULL,
    "count"       INTEGER NOT NULL,
    "at"          INTEGER NOT NULL,
    "run_id"      INTEGER NOT NULL
);

CREATE TABLE "runs" (
    "id"          INTEGER PRIMARY KEY AUTOINCREMENT,
    "env"         TEXT    NOT NULL,
    "pipeline"    TEXT    NOT NULL,
    "models"      TEXT    NOT NULL DEFAULT '[]',
    "since"       INTEGER,
    "until"       INTEGER,
    "state_mode"  TEXT    NOT NULL,
    "status"      TEXT    NOT NULL,
    "actor"       TEXT    NOT NULL,
    "started_at"  INTEGER NOT NULL,
    "finished_at" INTEGER
);
CREATE INDEX "runs_env" ON "runs" ("env", "id");

-- Seed 002's AUD_TASK_RUN_LOG.
CREATE TABLE "task_runs" (
    "run_id"       INTEGER NOT NULL REFERENCES "runs" ("id") ON DELETE CASCADE,
    "task_id"      INTEGER NOT NULL,
    "attempt"      INTEGER NOT NULL,
    "status"       TEXT    NOT NULL,
    "started_at"   INTEGER NOT NULL,
    "finished_at"  INTEGER,
    "rows_written" INTEGER,
    "target_count" INTEGER,
    "error"        TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY ("run_id", "task_id", "attempt")
) WITHOUT ROWID;

CREATE TABLE "audit_log" (
    "id"      INTEGER PRIMARY KEY AUTOINCREMENT,
    "at"      INTEGER NOT NULL,
    "actor"   TEXT    NOT NULL,
    "action"  TEXT    NOT NULL,
    "args"    TEXT    NOT NULL DEFAULT '{}',
    "outcome" TEXT    NOT NULL
);
