#!/bin/sh
# Loads one window of shop orders into raw.orders in the warehouse.
#
# The real loader pages through the shop platform's API (its base_url is in
# BOLLHAV_SOURCES). This one makes up an order every 20 minutes — the same
# orders on every run — so the example runs anywhere with only psql. The
# window is replaced in one transaction, so a rerun never doubles it.
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
    order_id    text PRIMARY KEY,
    ordered_at  timestamptz NOT NULL,
    currency    text NOT NULL,
    total_gross numeric NOT NULL
);
DELETE FROM :target WHERE ordered_at >= :'since' AND ordered_at < :'until';
WITH ins AS (
    INSERT INTO :target
    SELECT 'o-' || to_char(t AT TIME ZONE 'UTC', 'YYYYMMDDHH24MI'), t, 'SEK',
           100 + (extract(epoch FROM t)::bigint / 1200) % 900
    FROM generate_series(:'since'::timestamptz, :'until'::timestamptz - interval '1 second', interval '20 minutes') AS t
    RETURNING 1)
SELECT count(*) FROM ins;
SQL
)
echo "rows_written=$n"
