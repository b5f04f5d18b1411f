-- units_stuck again, carrying what the grouped stuck read counts by and
-- takes the earliest of (status, blocked_reason, updated_at), so that read
-- is an index-only scan of the stuck units instead of a scan of the whole
-- table: at 10M units the planner read all 10M rows (1.6 GB) for the
-- 1.08M blocked ones rather than fetch each from the index, about a
-- second, against half that from this index (docs/BENCHMARKS.md). The
-- paged read (StuckPage) seeks it as it sought units_stuck. Built
-- CONCURRENTLY (issue 35); the old index is dropped after, in the
-- migration's transaction: a catalog change, which waits only for the
-- queries on units running at that moment.
CREATE INDEX CONCURRENTLY units_stuck_covering ON {schema}.units (env, model, since, until) INCLUDE (status, blocked_reason, updated_at) WHERE status IN ('blocked', 'failed');
DROP INDEX IF EXISTS {schema}.units_stuck;
