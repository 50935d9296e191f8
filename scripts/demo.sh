#!/usr/bin/env bash
# lockstep's main job on one machine: start a cluster (4 nodes x 8 virtual GPUs), run the
# example jobs (one GPU, a 2-node x 8-GPU training job, an array, a dependency chain), show
# squeue and sacct, then replay a week of GPU jobs through the simulator. Run after
# scripts/build.sh. State goes to $LOCKSTEP_STATE_DIR (default: a fresh temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/build/bin
export LOCKSTEP_STATE_DIR=${LOCKSTEP_STATE_DIR:-$(mktemp -d /tmp/lockstep-demo-XXXXXX)}
work=$LOCKSTEP_STATE_DIR/work
mkdir -p "$work"
cp examples/jobs/*.sbatch "$work/"
"$bin/lockstep" up
trap '"$bin/lockstep" down' EXIT
"$bin/lockstep" install-aliases "$LOCKSTEP_STATE_DIR/bin" >/dev/null
export PATH=$LOCKSTEP_STATE_DIR/bin:$PATH
cd "$work"
one=$(sbatch --parsable one-gpu.sbatch)
train=$(sbatch --parsable train-2x8.sbatch)
sweep=$(sbatch --parsable array.sbatch)
pre=$(sbatch --parsable preprocess.sbatch)
eval=$(sbatch --parsable -d "afterok:$pre" evaluate.sbatch)
echo; echo "\$ squeue"; squeue
# Wait for every job to finish (squeue lists only what is pending or running).
for _ in $(seq 1 300); do [ "$(squeue -h | wc -l)" -eq 0 ] && break; sleep 0.2; done
echo; echo "\$ sacct"; sacct -X
for f in "slurm-$one.out" "slurm-$train.out" "slurm-${sweep}_0.out" "slurm-$eval.out"; do
  echo; echo "\$ cat $f"; cat "$f"
done
cd - >/dev/null
echo; echo "\$ lockstep sim --trace examples/traces/gpu64-week.csv --cluster examples/clusters/gpu64.yaml --plot out/charts"
"$bin/lockstep" sim --trace examples/traces/gpu64-week.csv --cluster examples/clusters/gpu64.yaml --plot out/charts
