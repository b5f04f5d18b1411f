#!/bin/sh
# Loads one window of click events into raw.events in the warehouse.
#
# The real loader reads the JSON-lines files dropped in dropzone/ (the file
# source's path and archive_folder are in BOLLHAV_SOURCES). This one makes
# up a click every five minutes, two to a session, so the example runs
# without any file. raw.events is flexible — row-preserving — so however
# bollhav slices the hours, replacing the window gives the same rows.
set -eu
: "${SHOP_WAREHOUSE_DSN:?set SHOP_WAREHOUSE_DSN to the warehouse DSN}"
schema=${BOLLHAV_TARGET%%.*}
n=$(psql "$SHOP_WAREHOUSE_DSN" -X -q -t -A -1 -v ON_ERROR_STOP=1 \
	-v since="$BOLLHAV_SINCE" -v until="$BOLLHAV_UNTIL" -v target="$BOLLHAV_TARGET" -v schema="$schema" <<'SQL'
-- IF NOT EXISTS is not safe against a concurrent twin (the units of both
-- loaders run side by side): one lock for the DDL, held to the commit.
DO $$ BEGIN PERFORM pg_advisory_xact_lock(hashtext('bollhav-shop-ddl')); END $$;
CREATE SCHEMA IF NOT EXISTS :schema;
CREATE TABLE IF NOT EXISTS :target (
    occurred_at timestamptz NOT NULL,
    session_id  text NOT NULL
);
DELETE FROM :target WHERE occurred_at >= :'since' AND occurred_at < :'until';
WITH ins AS (
    INSERT INTO :target
    SELECT t, 's-' || (extract(epoch FROM t)::bigint / 600)
    FROM generate_series(date_bin('5 minutes', :'since'::timestamptz + interval '299 seconds', timestamptz '2000-01-01'),
                         :'until'::timestamptz - interval '1 second', interval '5 minutes') AS t
    RETURNING 1)
SELECT count(*) FROM ins;
SQL
)
echo "rows_written=$n"
