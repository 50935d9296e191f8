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
dir="$(mktemp -d /tmp/start_latency.XXXXXX)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2> /dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

cat > "$dir/cluster.yaml" <<'YAML'
nodes:
  - {names: "vn[1-10000]", cpus: 32, memory: 64G, gpus: 8, gpu_type: h100}
partitions:
  - {name: main, nodes: "vn[1-9999]", default: true}
  - {name: express, nodes: "vn10000"}
YAML
${WRAP:-} "$bin/lockstepd" --config "$dir/cluster.yaml" --state-dir "$dir/state" \
  --log-file "$dir/lockstepd.log" &
pids+=($!)
lockstepd_pid=$!
"$bin/lockstep-agent" --socket "$dir/state/lockstepd.sock" --state-dir "$dir/agent" \
  --nodes "vn[1-10000]" --cpus 32 --mem 64G --gpus 8 --gpu-type h100 \
  --log-file "$dir/agent.log" &
pids+=($!)
# The submissions retry until lockstepd answers (it creates the socket once it has recovered).
for _ in $(seq 1 600); do [[ -S "$dir/state/lockstepd.sock" ]] && break; sleep 0.1; done
"$bin/submit_load" --socket "$dir/state/lockstepd.sock" --clients 8 --jobs "$jobs" \
  --fill-nodes 9999 --partition main --probe-partition express --probes "$probes" \
  --pid "$lockstepd_pid"
