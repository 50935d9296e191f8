#!/usr/bin/env bash
# Every option spelling of Slurm 22.05's commands, each with a valid value, run against the Slurm
# peer and against a `lockstep up` cluster, side by side (issue 16: "every option Slurm accepts,
# accepted"). The options come from bench/peers/options/<command>.txt (README.md there says how a
# line is run and what its placeholders become on each side).
#
# For each command it prints: the spellings tried, how many each side accepts, the ones lockstep
# refuses that Slurm accepts (with lockstep's first line of stderr), among the lines both refuse
# those whose exit code or leading words differ, and the ones only Slurm refuses. Accepted: exit
# 0, or still running when the per-line timeout ends (`squeue -i 1`). The peer runs no slurmdbd,
# so Slurm's sacct stops with "accounting storage is disabled" after parsing: there, accepted
# means no option error.
#
#   bench/peers/options_side_by_side.sh                   # every command
#   COMMANDS="squeue sinfo" bench/peers/options_side_by_side.sh
#   LOCKSTEP_ONLY=1 bench/peers/options_side_by_side.sh   # no peer: lockstep's side alone
# Knobs: LOCKSTEP_BIN (build/bin), SLURM_PEER_DIR (/var/tmp/slurm-peer), OUT (a scratch dir that
# keeps every line's output: <side>/<command>.tsv), SLURM_RESULTS (the slurm/ folder of an earlier
# run's OUT, to compare another lockstep build with it without running Slurm again).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${LOCKSTEP_BIN:-$root/build/bin}
peer=${SLURM_PEER:-$root/../shared/peers/slurm}
slurm_base=${SLURM_PEER_DIR:-/var/tmp/slurm-peer}
commands=${COMMANDS:-sbatch srun salloc squeue sinfo sacct scancel scontrol sprio}
out=${OUT:-$(mktemp -d /tmp/options-side-XXXXXX)}
mkdir -p "$out"
user=$(id -un)

with_peer=1
if [ "${LOCKSTEP_ONLY:-0}" = 1 ]; then
  with_peer=0
elif [ -n "${SLURM_RESULTS:-}" ]; then
  mkdir -p "$out/slurm" && cp "$SLURM_RESULTS"/*.tsv "$out/slurm/"
elif [ ! -f "$slurm_base/etc/slurm.conf" ] || ! command -v sbatch >/dev/null; then
  echo "The Slurm peer is absent ($slurm_base/etc/slurm.conf, or no sbatch on PATH): run" \
       "$peer/setup.sh first, or LOCKSTEP_ONLY=1 for lockstep's side alone." >&2
  exit 2
fi

# ---- fixtures per side: files the values name, and the jobs {job}/{running_job} stand for
scratch=$out/scratch
mkdir -p "$scratch"
echo "a.out" > "$scratch/file"
printf 'FOO=bar\n' > "$scratch/envfile"
printf '0 true\n' > "$scratch/multiprog"

# run SIDE CMD: the command on that side, with that side's environment (no shell function, so
# that `timeout` can run it).
side_cmd() {
  if [ "$1" = slurm ]; then echo "env SLURM_CONF=$slurm_base/etc/slurm.conf $2"
  else echo "env LOCKSTEP_STATE_DIR=$LOCKSTEP_STATE_DIR $bin/lockstep $2"; fi
}

# placeholder values per side
declare -A P
set_placeholders() {  # set_placeholders SIDE
  P[user]=$user P[gid]=$(id -g) P[qos]=normal P[wckey]=none P[mcs]=none P[license]=optcheck
  P[reservation]=optcheck P[feature]=optcheck P[dir]=$scratch P[file]=$scratch/file
  P[envfile]=$scratch/envfile P[multiprog]=$scratch/multiprog P[partition]=gpu P[account]=$user
  if [ "$1" = slurm ]; then
    P[node]=node001 P[node2]=$(env SLURM_CONF="$slurm_base/etc/slurm.conf" sinfo -h -N -o %N | tail -1)
    P[cluster]=$(env SLURM_CONF="$slurm_base/etc/slurm.conf" scontrol show config | awk '/^ClusterName/ {print $3}')
  else
    P[node]=node1 P[node2]=node4 P[cluster]=lockstep
  fi
  printf '%s\n' "${P[node]}" > "$scratch/nodefile.$1"
  P[nodefile]=$scratch/nodefile.$1
}

submit_held() {  # submit_held SIDE: the id of a new held job named optcheck
  $(side_cmd "$1" sbatch) --parsable --hold -J optcheck -o /dev/null --wrap true 2>/dev/null | cut -d';' -f1
}

expand() {  # expand LINE: the words of LINE with this side's placeholders
  local line=$1 k
  for k in "${!P[@]}"; do line=${line//\{$k\}/${P[$k]}}; done
  echo "$line"
}

option_error() {  # the words getopt and Slurm use for a refused option
  grep -qE "unrecognized option|invalid option|requires an argument|is ambiguous|doesn't allow an argument|Unrecognized option" "$1"
}

run_side() {  # run_side SIDE COMMAND: one line of <side>/<command>.tsv per option line
  local side=$1 cmd=$2 file=$here/options/$2.txt dir=$out/$1 line words rc err tail limit
  mkdir -p "$dir"
  : > "$dir/$cmd.tsv"
  limit=3
  case $cmd in sbatch|srun|salloc) limit=20 ;; esac
  while IFS= read -r line; do
    case $line in ''|'#'*) continue ;; esac
    [ "$cmd" = scancel ] && P[job]=$(submit_held "$side")
    words=$(expand "$line")
    tail=""
    case $cmd in
      sbatch) tail="--wrap true" ;;
      srun|salloc) tail="true" ;;
      scancel) tail=${P[job]} ;;
      scontrol) tail="show job ${P[job]}" ;;
    esac
    case $words in *'{nocmd}'*) words=${words//\{nocmd\}/}; tail="" ;; esac
    # shellcheck disable=SC2086  # the line's words are split as a shell would split them
    (cd "$scratch" && timeout -k 2 "$limit" $(side_cmd "$side" "$cmd") $words $tail \
       </dev/null >"$dir/out" 2>"$dir/err")
    rc=$?
    err=$(grep -v '^$' "$dir/err" | head -1 | tr '\t' ' ')
    if [ "$side" = slurm ] && [ "$cmd" = sacct ] && [ $rc = 1 ] && ! option_error "$dir/err"; then rc=0; fi
    printf '%s\t%s\t%s\n' "$line" "$rc" "$err" >> "$dir/$cmd.tsv"
  done < "$file"
}

prepare_side() {  # prepare_side SIDE: placeholders, the held and the running job
  set_placeholders "$1"
  P[job]=$(submit_held "$1")
  P[running_job]=$($(side_cmd "$1" sbatch) --parsable -J optcheck-run -o /dev/null --wrap 'sleep 600' | cut -d';' -f1)
}

cleanup_side() {
  $(side_cmd "$1" scancel) -u "$user" >/dev/null 2>&1 || true
}

# ---- Slurm
if [ $with_peer = 1 ] && [ -z "${SLURM_RESULTS:-}" ]; then
  prepare_side slurm
  for c in $commands; do run_side slurm "$c"; done
  cleanup_side slurm
fi

# ---- lockstep
export LOCKSTEP_STATE_DIR=$(mktemp -d /tmp/lockstep-options-XXXXXX)
trap '"$bin/lockstep" down >/dev/null 2>&1; rm -rf "$LOCKSTEP_STATE_DIR"' EXIT
trap 'exit 130' INT TERM  # so that the EXIT trap stops the cluster
"$bin/lockstep" up --nodes 4 --gpus-per-node 8 >/dev/null
prepare_side lockstep
for c in $commands; do run_side lockstep "$c"; done
cleanup_side lockstep

# ---- report
accepted() { [ "$1" = 0 ] || [ "$1" = 124 ]; }
lead() { echo "$1" | sed -E 's/^[a-z]+: //' | cut -d' ' -f1-2; }
echo "| command | spellings | accepted by Slurm | accepted by lockstep | accepted by both |"
echo "|---|---|---|---|---|"
details=""
for c in $commands; do
  n=0 s_ok=0 l_ok=0 both=0 refused="" differ="" lenient=""
  while IFS=$'\t' read -r line l_rc l_err; do
    n=$((n + 1))
    accepted "$l_rc" && l_ok=$((l_ok + 1))
    [ $with_peer = 1 ] || continue
    IFS=$'\t' read -r _ s_rc s_err < <(sed -n "${n}p" "$out/slurm/$c.tsv")
    accepted "$s_rc" && s_ok=$((s_ok + 1))
    if accepted "$s_rc" && accepted "$l_rc"; then both=$((both + 1))
    elif accepted "$s_rc"; then refused+="    $line    -> $l_err"$'\n'
    elif accepted "$l_rc"; then lenient+="    $line    Slurm $s_rc: $s_err"$'\n'
    elif [ "$s_rc" != "$l_rc" ] || [ "$(lead "$s_err")" != "$(lead "$l_err")" ]; then
      differ+="    $line    Slurm $s_rc: $s_err | lockstep $l_rc: $l_err"$'\n'
    fi
  done < "$out/lockstep/$c.tsv"
  if [ $with_peer = 1 ]; then
    echo "| $c | $n | $s_ok | $l_ok | $both |"
  else
    echo "| $c | $n | (no peer) | $l_ok | |"
  fi
  [ -n "$refused" ] && details+="$c: refused by lockstep, accepted by Slurm:"$'\n'"$refused"
  [ -n "$differ" ] && details+="$c: refused by both, exit code or leading words differ:"$'\n'"$differ"
  [ -n "$lenient" ] && details+="$c: accepted by lockstep, refused by Slurm:"$'\n'"$lenient"
done
echo
printf '%s' "$details"
echo "(every line's exit code and first line of stderr: $out/{slurm,lockstep}/<command>.tsv)"
