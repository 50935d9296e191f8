#!/usr/bin/env bash
# lockstepd with a large queue that cannot start: from the submission of a job that fits to its
# start. 10,000 virtual nodes x 8 GPUs served by one lockstep-agent; an exclusive job holds
# the 9,999 nodes of partition `main`, JOBS one-GPU jobs pend behind it there, and PROBES
# one-GPU jobs are submitted one at a time to `express` (the last node), each timed until
# lockstepd answers that it no longer pends (submit_load --probes).
#
#   bench/start_latency.sh                   # JOBS=100000 PROBES=20
#   BUILD=build JOBS=10000 bench/start_latency.sh
#   WRAP="perf record -g -o /tmp/lockstepd.perf --" bench/start_latency.sh   # profile lockstepd
#
# Everything runs in a temporary directory; lockstepd and the agent are stopped by PID at the end.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$here/../${BUILD:-build}/bin"
jobs="${JOBS:-100000}"
probes="${PROBES:-20}"
source "$here/cluster_lib.sh"
bench_tempdir start_latency

cat > "$dir/cluster.yaml" <<'YAML'
nodes:
  - {names: "vn[1-10000]", cpus: 32, memory: 64G, gpus: 8, gpu_type: h100}
partitions:
  - {name: main, nodes: "vn[1-9999]", default: true}
  - {name: express, nodes: "vn10000"}
scheduler: {max_job_count: 10000000}  # above Slurm's default 10,000: the load is 100,000 jobs
YAML
bench_start_cluster "vn[1-10000]"
"$bin/submit_load" --socket "$dir/state/lockstepd.sock" --clients 8 --jobs "$jobs" \
  --fill-nodes 9999 --partition main --probe-partition express --probes "$probes" \
  --pid "$lockstepd_pid"
