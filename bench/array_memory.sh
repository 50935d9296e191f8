#!/usr/bin/env bash
# lockstepd's memory with one large job array pending behind a full cluster (issue 13): for each
# size, a fresh lockstepd and agent (4 nodes), an exclusive job holding the 4 nodes, then
# `sbatch --array=0-(N-1) -t 10 --wrap true`. Prints, per size: the submission's time, lockstepd's
# resident memory before and after (ps, after a scheduling pass), its peak (VmHWM), the store's
# size on disk, squeue's lines and time, and `squeue -r` (one line per task, computed by the CLI
# from the array's ranges): its lines, time and the CLI's peak memory.
#
#   bench/array_memory.sh                          # SIZES="1000 10000 100000 1000000 4000000"
#   SIZES="1000 100000" bench/array_memory.sh
#
# Every process is started in a temporary directory and stopped by PID at the end of its size.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$here/../${BUILD:-build}/bin"
sizes="${SIZES:-1000 10000 100000 1000000 4000000}"
source "$here/cluster_lib.sh"

rss_mib() { echo $(($(ps -o rss= -p "$1") / 1024)); }
hwm_mib() { awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$1/status"; }
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

one_size() {
  local n=$1
  bench_tempdir array_memory
  bench_start_four_gpu_nodes
  local sbatch="$dir/aliases/sbatch" squeue="$dir/aliases/squeue"
  (cd "$dir" && "$sbatch" --exclusive -N4 -t 60 --wrap 'sleep 600' > /dev/null)
  # Running once the agent has it: the array then stays pending.
  for _ in $(seq 1 300); do
    [[ "$("$squeue" -h -t R -o %i | wc -l)" == 1 ]] && break
    sleep 0.1
  done
  local before start submit_ms lines squeue_ms after hwm store expanded
  before=$(rss_mib "$lockstepd_pid")
  start=$(date +%s%N)
  (cd "$dir" && "$sbatch" --array="0-$((n - 1))" -t 10 --wrap true > /dev/null)
  submit_ms=$(ms_since "$start")
  start=$(date +%s%N)
  lines=$("$squeue" -h | wc -l)
  squeue_ms=$(ms_since "$start")
  "$squeue" -h > /dev/null  # a pass has run since the submission: its reasons are shown
  after=$(rss_mib "$lockstepd_pid")
  hwm=$(hwm_mib "$lockstepd_pid")
  store=$(du -sm "$dir/state" | cut -f1)
  start=$(date +%s%N)
  expanded=$(/usr/bin/time -f '%M' -o "$dir/squeue_r.kib" "$squeue" -h -r | wc -l)
  expanded="$expanded lines, $(ms_since "$start") ms, $(($(cat "$dir/squeue_r.kib") / 1024)) MiB"
  printf '| %s | %s | %s | %s | %s | %s | %s lines, %s ms | %s |\n' "$n" "$submit_ms" "$before" \
    "$after" "$hwm" "$store" "$lines" "$squeue_ms" "$expanded"
}

echo "| tasks | sbatch ms | RSS before MiB | RSS after MiB | peak MiB | store MiB | squeue | squeue -r |"
echo "|---:|---:|---:|---:|---:|---:|---|---|"
for n in $sizes; do (one_size "$n"); done
