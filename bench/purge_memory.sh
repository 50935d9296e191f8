#!/usr/bin/env bash
# lockstepd's memory under a stream of finished jobs (issue 27): a fresh lockstepd and agent (4
# nodes of 32 CPUs), MinJobAge of $MIN_JOB_AGE s, then $JOBS jobs run to their end, as one array
# per $CHUNK jobs (`sbatch --array=0-(CHUNK-1) -o /dev/null --wrap true`, each array submitted
# when the one before has ended). lockstepd's resident memory (VmRSS) is sampled $SAMPLES times,
# a second apart, at start (nodes registered, no job yet) and after every job has ended and
# MinJobAge has passed (squeue --states=all empty), and after each chunk; the medians and their
# ratio are printed. Then sacct must list every job (its count is checked) and is timed.
#
#   bench/purge_memory.sh                 # JOBS=200000 CHUNK=20000 MIN_JOB_AGE=5 SAMPLES=5
#   JOBS=20000 bench/purge_memory.sh
#
# Every process is started in a temporary directory and stopped by PID at the end.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$here/../${BUILD:-build}/bin"
jobs="${JOBS:-200000}"
chunk="${CHUNK:-20000}"
age="${MIN_JOB_AGE:-5}"
samples="${SAMPLES:-5}"
source "$here/cluster_lib.sh"

rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
# The median of $samples readings of lockstepd's VmRSS, in KiB, a second apart.
median_rss_kib() {
  local values=()
  for _ in $(seq 1 "$samples"); do values+=("$(rss_kib "$lockstepd_pid")"); sleep 1; done
  printf '%s\n' "${values[@]}" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
# Polls (a benchmark's wait, not a test's) until `squeue --states=all` lists nothing: every job
# has ended and been purged.
wait_all_purged() {
  while [[ -n "$("$dir/aliases/squeue" -h --states=all -o %i)" ]]; do sleep 1; done
}

bench_tempdir purge_memory
cat > "$dir/cluster.yaml" <<YAML
nodes:
  - {names: "node[1-4]", cpus: 32, memory: 64G, gpus: 8, gpu_type: h100}
partitions:
  - {name: gpu, nodes: "node[1-4]", default: true}
scheduler:
  min_job_age: $age
YAML
bench_start_cluster "node[1-4]" 2> /dev/null
export LOCKSTEP_SOCKET="$dir/state/lockstepd.sock"
mkdir -p "$dir/aliases"
for c in sbatch squeue sacct sinfo; do ln -s "$bin/lockstep-slurm" "$dir/aliases/$c"; done
while [[ "$("$dir/aliases/sinfo" -h -t idle -o %D)" != 4 ]]; do sleep 0.2; done

start=$(median_rss_kib)
echo "lockstepd RSS at start: $(mib "$start") MiB (median of $samples)"
echo "| jobs ended | RSS MiB (median) | ratio to start | seconds |"
echo "|---:|---:|---:|---:|"
began=$(date +%s)
done_jobs=0
while ((done_jobs < jobs)); do
  n=$((jobs - done_jobs < chunk ? jobs - done_jobs : chunk))
  (cd "$dir" && "$dir/aliases/sbatch" --array="0-$((n - 1))" -o /dev/null --wrap true > /dev/null)
  wait_all_purged
  done_jobs=$((done_jobs + n))
  now=$(median_rss_kib)
  printf '| %s | %s | %s | %s |\n' "$done_jobs" "$(mib "$now")" \
    "$(awk -v a="$now" -v b="$start" 'BEGIN {printf "%.3f", a / b}')" $(($(date +%s) - began))
done

t0=$(date +%s%N)
counted=$("$dir/aliases/sacct" -a -X -n -P -o JobID -S 2000-01-01 | wc -l)
sacct_ms=$((($(date +%s%N) - t0) / 1000000))
echo "sacct -a -X over the store: $counted jobs listed (expected $jobs), $sacct_ms ms"
echo "store: $(du -sm "$dir/state" | cut -f1) MiB; lockstepd peak (VmHWM): $(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$lockstepd_pid/status") MiB"
[[ "$counted" == "$jobs" ]]
