#!/bin/sh
# Tells the on-call channel that a core rollup failed. The real script posts
# to the chat's webhook; this one prints what it would post.
set -eu
echo "would post to ${1:-#data-oncall}: a core rollup failed in run ${BOLLHAV_RUN_ID:-?}; see 'bollhav incidents'" >&2
