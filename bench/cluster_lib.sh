# Shared by the bench scripts that run a real lockstepd and agent (start_latency.sh,
# cli_startup.sh, array_memory.sh): source it, then
#
#   bench_tempdir NAME                 # $dir, a temporary directory removed at exit, and the
#                                      # processes started below stopped by PID at exit
#   cat > "$dir/cluster.yaml" ...      # the cluster
#   bench_start_cluster "node[1-4]"    # lockstepd (run through $WRAP if set) and one agent
#                                      # serving those nodes (32 CPUs, 64G, 8 h100 GPUs each);
#                                      # returns once lockstepd's socket exists ($lockstepd_pid)
#   bench_start_four_gpu_nodes         # the same over node[1-4] in one partition (its own
#                                      # cluster.yaml), LOCKSTEP_SOCKET exported, and sbatch and
#                                      # squeue linked to lockstep-slurm in $dir/aliases
#   per_call CMD ARGS...               # milliseconds a call over a loop of $calls calls
#   median < FILE                      # the median of numbers one a line
#
# Expects $bin, the directory of the built binaries.

bench_tempdir() {
  dir="$(mktemp -d "/tmp/$1.XXXXXX")"
  pids=()
  trap bench_cleanup EXIT
}

bench_cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2> /dev/null || true; done
  rm -rf "$dir"
}

bench_start_cluster() {
  ${WRAP:-} "$bin/lockstepd" --config "$dir/cluster.yaml" --state-dir "$dir/state" \
    --log-file "$dir/lockstepd.log" &
  pids+=($!)
  lockstepd_pid=$!
  "$bin/lockstep-agent" --socket "$dir/state/lockstepd.sock" --state-dir "$dir/agent" \
    --nodes "$1" --cpus 32 --mem 64G --gpus 8 --gpu-type h100 --log-file "$dir/agent.log" &
  pids+=($!)
  # lockstepd creates its socket once it has recovered its state.
  for _ in $(seq 1 600); do [[ -S "$dir/state/lockstepd.sock" ]] && return 0; sleep 0.1; done
  echo "lockstepd did not start: see $dir/lockstepd.log" >&2
  return 1
}

bench_start_four_gpu_nodes() {
  cat > "$dir/cluster.yaml" <<'YAML'
nodes:
  - {names: "node[1-4]", cpus: 32, memory: 64G, gpus: 8, gpu_type: h100}
partitions:
  - {name: gpu, nodes: "node[1-4]", default: true}
scheduler: {max_job_count: 10000000}  # squeue_load.sh holds 100,000 jobs
YAML
  bench_start_cluster "node[1-4]" 2> /dev/null || return 1
  export LOCKSTEP_SOCKET="$dir/state/lockstepd.sock"
  mkdir -p "$dir/aliases"
  for c in sbatch squeue; do ln -s "$bin/lockstep-slurm" "$dir/aliases/$c"; done
}

# Milliseconds per call of a loop of $calls calls of "$@" (cli_startup.sh, squeue_by_id.sh).
per_call() {
  local start end
  start=$(date +%s%N)
  for ((i = 0; i < calls; i++)); do "$@" > /dev/null; done
  end=$(date +%s%N)
  echo "scale=3; ($end - $start) / $calls / 1000000" | bc
}

# The median of the numbers on stdin, one a line.
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
