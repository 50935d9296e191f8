#!/usr/bin/env bash
# CLI start-up, side by side: loops of CALLS calls of `squeue -h` (lockstep-slurm through the
# name squeue, and `lockstep squeue`) against loops of /bin/true, interleaved over ROUNDS rounds
# so that a busy machine slows all alike; then the sequential sbatch rate (CALLS x
# `sbatch --hold --wrap true`, one client), and the same against the Slurm peer when its
# controller answers (SLURM_CONF, ../shared/peers/slurm).
#
#   bench/cli_startup.sh                 # CALLS=300 ROUNDS=5
#   BUILD=build CALLS=100 bench/cli_startup.sh
#
# lockstepd and the agent run in a temporary directory and are stopped by PID at the end.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$here/../${BUILD:-build}/bin"
calls="${CALLS:-300}"
rounds="${ROUNDS:-5}"
source "$here/cluster_lib.sh"
bench_tempdir cli_startup

bench_start_four_gpu_nodes

: > "$dir/true" && : > "$dir/light" && : > "$dir/full"
for ((r = 0; r < rounds; r++)); do
  per_call /bin/true >> "$dir/true"
  per_call "$dir/aliases/squeue" -h >> "$dir/light"
  per_call "$bin/lockstep" squeue -h >> "$dir/full"
done
t=$(median < "$dir/true")
l=$(median < "$dir/light")
f=$(median < "$dir/full")
echo "start-up, ms per call (median of $rounds loops of $calls):"
printf '  /bin/true                        %s\n' "$t"
printf '  squeue -h (lockstep-slurm)       %s  (%.2fx)\n' "$l" "$(echo "$l / $t" | bc -l)"
printf '  lockstep squeue -h               %s  (%.2fx)\n' "$f" "$(echo "$f / $t" | bc -l)"

start=$(date +%s%N)
for ((i = 0; i < calls; i++)); do "$dir/aliases/sbatch" --hold --wrap true > /dev/null; done
end=$(date +%s%N)
echo "sequential sbatch --hold (lockstep-slurm): $(echo "scale=1; $calls * 1000000000 / ($end - $start)" | bc) submits/s"

if [[ -n "${SLURM_CONF:-}" ]] && timeout 5 /usr/bin/squeue -h > /dev/null 2>&1; then
  printf '  squeue -h (Slurm peer)           %s\n' "$(per_call /usr/bin/squeue -h)"
  start=$(date +%s%N)
  ids=()
  for ((i = 0; i < calls; i++)); do ids+=("$(/usr/bin/sbatch --parsable --hold --wrap true)"); done
  end=$(date +%s%N)
  echo "sequential sbatch --hold (Slurm peer): $(echo "scale=1; $calls * 1000000000 / ($end - $start)" | bc) submits/s"
  /usr/bin/scancel "${ids[@]}" > /dev/null 2>&1 || true
else
  echo "Slurm peer: its controller does not answer (SLURM_CONF=${SLURM_CONF:-unset}); skipped"
fi
