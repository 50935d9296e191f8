#!/usr/bin/env bash
# squeue over a large queue: JOBS held jobs (default 100,000) on four nodes, then `squeue -h` and
# `squeue --json` timed (wall, CPU, peak memory of the command), and, while another `squeue -h`
# runs, `sbatch -H` submitted every 0.1 s: the slowest of those submissions is what a user
# waits when someone else lists the queue. lockstepd's lock-hold histogram (GET /api/v1/diag)
# and its peak memory close the report.
#
#   bench/squeue_load.sh                       # JOBS=100000
#   BUILD=build JOBS=10000 bench/squeue_load.sh
#
# Everything runs in a temporary directory; lockstepd and the agent are stopped by PID at the end.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$here/../${BUILD:-build}/bin"
jobs="${JOBS:-100000}"
source "$here/cluster_lib.sh"
bench_tempdir squeue_load
bench_start_four_gpu_nodes
"$bin/submit_load" --socket "$LOCKSTEP_SOCKET" --clients 8 --jobs "$jobs" --hold > /dev/null
aliases="$dir/aliases"

timed() {
  /usr/bin/time -f "%e s wall, %U + %S s CPU, %M KB max RSS" -o "$dir/time" "$@" > /dev/null
  cat "$dir/time"
}
echo "squeue -h:     $(timed "$aliases/squeue" -h)"
echo "squeue --json: $(timed "$aliases/squeue" --json)"

"$aliases/squeue" -h > /dev/null &
listing=$!
slowest=0
while kill -0 "$listing" 2> /dev/null; do
  start=$(date +%s%N)
  "$aliases/sbatch" -H --wrap true > /dev/null
  took=$(( ($(date +%s%N) - start) / 1000000 ))
  (( took > slowest )) && slowest=$took
  sleep 0.1
done
wait "$listing"
echo "slowest sbatch -H while squeue -h ran: $slowest ms"
curl -s --unix-socket "$LOCKSTEP_SOCKET" http://lockstepd/api/v1/diag |
  python3 -c 'import json, sys; h = json.load(sys.stdin)["lock_hold"]; print("lockstepd lock holds:", h)'
grep VmHWM "/proc/$lockstepd_pid/status"
