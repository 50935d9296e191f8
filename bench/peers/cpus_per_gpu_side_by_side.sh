#!/usr/bin/env bash
# --cpus-per-gpu side by side: the same sbatch command lines on the Slurm 22.05 peer and on a
# `lockstep up` cluster of the same shape (nodes of 64 CPUs and 8 GPUs), each job printing
# SLURM_JOB_CPUS_PER_NODE; then `scontrol show job`'s NumCPUs on each side. One line per command
# line: what Slurm gives, what lockstep gives (docs/commands.md, "sbatch, srun, salloc").
#
#   bench/peers/cpus_per_gpu_side_by_side.sh
# Knobs: LOCKSTEP_BIN (build/bin), SLURM_PEER_DIR (/var/tmp/slurm-peer; its setup.sh must have
# run, with at least 2 nodes).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${LOCKSTEP_BIN:-$root/build/bin}
slurm_conf=${SLURM_PEER_DIR:-/var/tmp/slurm-peer}/etc/slurm.conf
[ -f "$slurm_conf" ] || { echo "no Slurm peer at $slurm_conf (run its setup.sh)" >&2; exit 2; }
work=$(mktemp -d /tmp/cpus-per-gpu-XXXXXX)
export LOCKSTEP_STATE_DIR=$work/lockstep
trap '"$bin/lockstep" down >/dev/null 2>&1; rm -rf "$work"' EXIT
"$bin/lockstep" up --nodes 2 --gpus-per-node 8 --cpus-per-node 64 >/dev/null || exit 1

lines=(
  "--cpus-per-gpu=4 --gpus-per-node=2"
  "--cpus-per-gpu=4 --gres=gpu:2"
  "--cpus-per-gpu=4 -G 3"
  "--cpus-per-gpu=4 -G 3 -N 2"
  "--cpus-per-gpu=4 -N 2 --gpus-per-node=2"
  "--cpus-per-gpu=4 -n 3 --gpus-per-node=2"
  "--cpus-per-gpu=2 -n 12 --gpus-per-node=2"
  "--cpus-per-gpu=4 --ntasks-per-node=3 --gpus-per-node=2 -N 2"
  "--cpus-per-gpu=4"
  "--cpus-per-gpu=4 -n 2 --gpus-per-task=2"
  "--cpus-per-gpu=4 -c 2 --gpus-per-node=1"
)

# run SIDE LINE: "NumCPUs SLURM_JOB_CPUS_PER_NODE", or the first line of the refusal.
run() {
  local sbatch=(env SLURM_CONF="$slurm_conf" sbatch) scontrol=(env SLURM_CONF="$slurm_conf" scontrol)
  if [ "$1" = lockstep ]; then sbatch=("$bin/lockstep" sbatch) scontrol=("$bin/lockstep" scontrol); fi
  local out id
  # shellcheck disable=SC2086 # the line's words
  # A job that cannot start (a peer node gone INVAL, say) shows as a timeout, not a hang.
  out=$(cd "$work" && timeout 60 "${sbatch[@]}" --parsable -W -t 1 -o "$work/$1-%j.out" $2 \
        --wrap 'echo $SLURM_JOB_CPUS_PER_NODE' 2>&1)
  case $? in
    0) ;;
    124) echo "did not end within 60 s"; return ;;
    *) echo "refused: ${out%%$'\n'*}"; return ;;
  esac
  id=${out%%[;$'\n']*}
  echo "$("${scontrol[@]}" show job "$id" | grep -o 'NumCPUs=[0-9]*') $(cat "$work/$1-$id.out")"
}

printf '%-60s | %-26s | %s\n' "command line" "Slurm 22.05" "lockstep"
for line in "${lines[@]}"; do
  printf '%-60s | %-26s | %s\n' "$line" "$(run slurm "$line")" "$(run lockstep "$line")"
done
