#!/usr/bin/env bash
# `squeue -h -j ID` with few and with many jobs in lockstepd, beside a bare process start:
# lockstepd looks the named jobs up (GET /api/v1/jobs?job=ID), so the cost should not grow with
# the queue. Loops of CALLS calls, interleaved over ROUNDS rounds so that a busy machine slows
# all alike; medians of the rounds.
#
#   bench/squeue_by_id.sh                 # JOBS=100000 CALLS=100 ROUNDS=5
#
# lockstepd and the agent run in a temporary directory and are stopped by PID at the end.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$here/../${BUILD:-build}/bin"
jobs="${JOBS:-100000}"
calls="${CALLS:-100}"
rounds="${ROUNDS:-5}"
source "$here/cluster_lib.sh"
bench_tempdir squeue_by_id
bench_start_four_gpu_nodes
squeue="$dir/aliases/squeue"

measure() {  # $1: label
  : > "$dir/true" && : > "$dir/byid"
  for ((r = 0; r < rounds; r++)); do
    per_call /bin/true >> "$dir/true"
    per_call "$squeue" -h -j 1 >> "$dir/byid"
  done
  local t b
  t=$(median < "$dir/true")
  b=$(median < "$dir/byid")
  echo "$1: squeue -h -j 1 $b ms a call; /bin/true $t ms; $(echo "scale=2; $b / $t" | bc)x a bare start"
}

"$bin/submit_load" --socket "$LOCKSTEP_SOCKET" --clients 1 --jobs 10 --hold > /dev/null
measure "10 jobs"
"$bin/submit_load" --socket "$LOCKSTEP_SOCKET" --clients 8 --jobs $((jobs - 10)) --hold > /dev/null
measure "$jobs jobs"
