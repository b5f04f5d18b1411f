#!/bin/sh
# Loads one hour of payment settlements from the payment provider.
# bollhav passes the window in BOLLHAV_SINCE / BOLLHAV_UNTIL (RFC 3339 UTC)
# and reads rows_written=N from stdout; stderr's tail becomes the error.
# The provider is down for the hour in ./outage: that hour fails every time
# it runs, until the file is removed (the provider is back).
set -eu
here=$(dirname "$0")
if [ -f "$here/outage" ] && [ "$BOLLHAV_SINCE" = "$(cat "$here/outage")" ]; then
  echo "GET https://payments.example.com/v2/settlements?from=$BOLLHAV_SINCE: 503 Service Unavailable" >&2
  echo "the payment provider is down until scripts/outage is removed; retry then" >&2
  exit 1
fi
hour=$(printf '%s' "$BOLLHAV_SINCE" | cut -c12-13)
echo "rows_written=$(( ${hour#0} * 3 + 7 ))"
