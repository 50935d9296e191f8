#!/usr/bin/env bash
# Throughput of a real lockstep cluster on this machine (lockstep up, 64 nodes x 8 virtual
# GPUs), as the cluster issue measures it:
#   a) N x `sbatch --hold --wrap true`, one client, sequential: submissions per second;
#   b) N x `sbatch --gpus=1 -t 1 --wrap 'sleep 0'`, sequential, first submit to all finished.
# Slurm's figures from ../shared/peers/slurm on the same machine (bench.sh a1 and b1) belong
# beside these, measured in the same run; this script says when they are absent.
#   LOCKSTEP_BIN=build/bin N=2000 bench/cluster_throughput.sh
set -euo pipefail
bin=${LOCKSTEP_BIN:-$(cd "$(dirname "$0")/.." && pwd)/build/bin}
N=${N:-2000}
export LOCKSTEP_STATE_DIR=$(mktemp -d /tmp/lockstep-bench-XXXXXX)
trap '"$bin/lockstep" down >/dev/null; rm -rf "$LOCKSTEP_STATE_DIR"' EXIT
"$bin/lockstep" up --nodes 64 --gpus-per-node 8 >/dev/null
cd "$LOCKSTEP_STATE_DIR"
now() { date +%s.%N; }

t0=$(now)
for _ in $(seq "$N"); do "$bin/lockstep" sbatch --hold --wrap true >/dev/null; done
t1=$(now)
a=$(echo "$N / ($t1 - $t0)" | bc -l)
"$bin/lockstep" scancel -u root -t PD >/dev/null 2>&1 || true

t0=$(now)
for _ in $(seq "$N"); do "$bin/lockstep" sbatch --gpus=1 -t 1 --wrap 'sleep 0' >/dev/null; done
while [ "$("$bin/lockstep" squeue -h | wc -l)" -gt 0 ]; do sleep 0.05; done
t1=$(now)
b=$(echo "$N / ($t1 - $t0)" | bc -l)
printf '| a: sequential sbatch --hold | %d jobs | %.0f submissions/s |\n' "$N" "$a"
printf '| b: sequential sbatch sleep 0, to completion | %d jobs | %.1f jobs/s |\n' "$N" "$b"
if [ -d /var/tmp/slurm-peer/results ]; then
  echo "Slurm peer results: /var/tmp/slurm-peer/results"
else
  echo "Slurm 22.05 peer not run here (../shared/peers/slurm/setup.sh and bench.sh a b): no ratio."
fi
