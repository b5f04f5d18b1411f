#!/bin/sh
# Posts a run summary whatever happened to the cumulative rollup. The real
# script posts to the team's channel; this one prints the line it would post.
set -eu
echo "run ${BOLLHAV_RUN_ID:-?} finished; 'bollhav status' has the details" >&2
