#!/usr/bin/env bash
# lockstep and a real Slurm 22.05 measured side by side in one run on this machine, both with
# 64 nodes x 8 GPUs, for the cluster issue's throughput figures:
#   a1  N x `sbatch --hold --wrap true`, one client, sequential
#   a2  the same with 4 parallel clients
#   b1  N x `sbatch --gpus=1 -t 1 --wrap 'sleep 0'`, sequential, first submit to all finished
#   api concurrent submissions through lockstep's REST API (32 clients; Slurm has no such path
#       beyond sbatch, so a2 is its figure)
# Slurm comes from ../shared/peers/slurm (setup.sh must have been run; this script says so when
# it has not); the Slurm commands are those of its bench.sh. Prints a Markdown table with ratios.
#   LOCKSTEP_BIN=build-lead/bin N=2000 bench/peers/slurm_side_by_side.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${LOCKSTEP_BIN:-$root/build/bin}
peer=${SLURM_PEER:-$root/../shared/peers/slurm}
N=${N:-2000}
export N
slurm_base=${SLURM_PEER_DIR:-/var/tmp/slurm-peer}
if [ ! -x "$peer/bench.sh" ] || [ ! -f "$slurm_base/etc/slurm.conf" ]; then
  echo "The Slurm peer is absent ($peer, $slurm_base): run $peer/setup.sh first." >&2
  exit 2
fi
now() { date +%s.%N; }
rate() { echo "scale=1; $1 / ($3 - $2)" | bc; }

# ---- Slurm: the commands of the peer's bench.sh (a1, a2, b1), run here so that only these run
export SLURM_CONF=$slurm_base/etc/slurm.conf
if sinfo -h -o %t | grep -qv '^idle$'; then
  echo "The Slurm peer's nodes are not all idle (sinfo says $(sinfo -h -o '%t' | sort -u | tr '\n' ' ')):" \
       "restart it with $peer/stop.sh and $peer/setup.sh." >&2
  exit 2
fi
slurm_empty() { while [ "$(squeue -h -r -o %i 2>/dev/null | wc -l)" -gt 0 ]; do sleep 0.25; done; }
cd "$slurm_base"
t0=$(now)
for _ in $(seq "$N"); do sbatch --hold -Q -o /dev/null --wrap true >/dev/null; done
s_a1=$(rate "$N" "$t0" "$(now)")
scancel -u "$(id -un)"; slurm_empty
t0=$(now)
seq "$N" | xargs -P 4 -I{} sbatch --hold -Q -o /dev/null --wrap true >/dev/null
s_a2=$(rate "$N" "$t0" "$(now)")
scancel -u "$(id -un)"; slurm_empty
t0=$(now)
for _ in $(seq "$N"); do sbatch -Q -o /dev/null --gres=gpu:1 -t 1 --wrap 'sleep 0' >/dev/null; done
slurm_empty
s_b1=$(rate "$N" "$t0" "$(now)")

# ---- lockstep
export LOCKSTEP_STATE_DIR=$(mktemp -d /tmp/lockstep-side-XXXXXX)
trap '"$bin/lockstep" down >/dev/null 2>&1; rm -rf "$LOCKSTEP_STATE_DIR"' EXIT
"$bin/lockstep" up --nodes 64 --gpus-per-node 8 >/dev/null
cd "$LOCKSTEP_STATE_DIR"
t0=$(now)
for _ in $(seq "$N"); do "$bin/lockstep" sbatch --hold -o /dev/null --wrap true >/dev/null; done
l_a1=$(rate "$N" "$t0" "$(now)")
"$bin/lockstep" scancel -u "$(id -un)" -t PD >/dev/null 2>&1 || true
t0=$(now)
seq "$N" | xargs -P 4 -I{} "$bin/lockstep" sbatch --hold -o /dev/null --wrap true >/dev/null
l_a2=$(rate "$N" "$t0" "$(now)")
"$bin/lockstep" scancel -u "$(id -un)" -t PD >/dev/null 2>&1 || true
t0=$(now)
for _ in $(seq "$N"); do
  "$bin/lockstep" sbatch -o /dev/null --gpus=1 -t 1 --wrap 'sleep 0' >/dev/null
done
while [ "$("$bin/lockstep" squeue -h | wc -l)" -gt 0 ]; do sleep 0.05; done
l_b1=$(rate "$N" "$t0" "$(now)")
api=$("$bin/submit_load" --socket "$LOCKSTEP_STATE_DIR/lockstepd.sock" --clients 32 \
  --jobs $((N * 10)) --hold | grep -o '[0-9]* submissions/s' | cut -d' ' -f1)

ratio() { [ -n "$2" ] && echo "scale=1; $1 / $2" | bc || echo "n/a"; }
echo "| test (N=$N, 64 nodes x 8 GPUs) | lockstep | Slurm 22.05 | ratio |"
echo "|---|---|---|---|"
echo "| a1 sequential sbatch --hold, submissions/s | $l_a1 | ${s_a1:-n/a} | $(ratio "$l_a1" "$s_a1")x |"
echo "| a2 sbatch --hold, 4 parallel clients, submissions/s | $l_a2 | ${s_a2:-n/a} | $(ratio "$l_a2" "$s_a2")x |"
echo "| b1 sequential sleep-0 GPU jobs, first submit to all finished, jobs/s | $l_b1 | ${s_b1:-n/a} | $(ratio "$l_b1" "$s_b1")x |"
echo "| API, 32 concurrent clients, durable submissions/s | $api | (a2: ${s_a2:-n/a}) | $(ratio "$api" "$s_a2")x |"
