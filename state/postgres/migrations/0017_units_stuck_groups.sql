-- The stuck units again, keyed in the grouped read's GROUP BY order and
-- carrying what it aggregates, so `bollhav blocked`, incidents and the
-- metrics refresh count them by model, status and reason from the index
-- alone instead of visiting every stuck row of the table (stuck.go,
-- StuckGroups; at 10M units 0.9-1.9 s of heap reads, issue 33).
--
-- A B-tree entry holds at most 2,704 bytes, and a reason that lists many
-- missing ranges can be longer: an index carrying every reason would make
-- the write that blocks such a unit fail. So the index holds only the
-- units whose reason is under 2,000 bytes (with the names, at most 63
-- bytes each, and the times, an entry stays well inside the limit), and
-- units_stuck_long the rest, keys only: the read visits the table for
-- those few. Together they hold every stuck unit once. Built CONCURRENTLY
-- (issue 35), as every index on units since 0009.
CREATE INDEX CONCURRENTLY units_stuck_groups ON {schema}.units (env, model, status, blocked_reason) INCLUDE (since, until, updated_at)
	WHERE status IN ('blocked', 'failed') AND coalesce(octet_length(blocked_reason), 0) < 2000;
CREATE INDEX CONCURRENTLY units_stuck_long ON {schema}.units (env, model)
	WHERE status IN ('blocked', 'failed') AND octet_length(blocked_reason) >= 2000;
