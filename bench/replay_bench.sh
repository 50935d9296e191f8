#!/usr/bin/env bash
# Replays every SWF trace of ../shared/data/swf (and the Alibaba 2023 pod list) through
# `lockstep sim --json` under FCFS, EASY and, on the small traces, conservative backfilling, and
# prints a markdown table with the wall time of each run, the time spent planning, and the
# metrics of the field beside those of the production schedule recorded in the trace. Then says,
# per trace, whether EASY beats FCFS on mean bounded slowdown and on mean wait.
#
#   bench/replay_bench.sh                 # from the repository root
#   LOCKSTEP_BIN=/path/to/lockstep bench/replay_bench.sh
#
# Environment:
#   LOCKSTEP_BIN         the lockstep binary (default: build-bench/bin/lockstep, else
#                        build-bench/src/cli/lockstep)
#   LOCKSTEP_SHARED_DIR  the shared data directory (default: ../shared beside the repository)
#   REPLAY_TIMEOUT       seconds one run may take before it is stopped and reported (default 900)
#   REPLAY_SKIP_SLOW=1   skip conservative on lublin_256 (~8 minutes here: its offered load is
#                        106%, so queues grow to thousands of jobs and every pass makes 100
#                        reservations); FCFS on it (~35 s) still runs, last
#   REPLAY_ONLY=REGEX    run only the traces whose file name matches
#
# Needs bash, jq (or python3) and GNU date. Exits 0 without running anything when the shared
# data is absent.
set -u -o pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
# Programs land in build-bench/bin since the top-level CMakeLists sets the output directory;
# older trees put lockstep in build-bench/src/cli.
bin="${LOCKSTEP_BIN:-}"
if [[ -z "$bin" ]]; then
  bin="$root/build-bench/bin/lockstep"
  [[ -x "$bin" ]] || bin="$root/build-bench/src/cli/lockstep"
fi
shared="${LOCKSTEP_SHARED_DIR:-$root/../shared}"
swf_dir="$shared/data/swf"
alibaba="$shared/data/alibaba-2023/openb_pod_list_default.csv"
timeout_s="${REPLAY_TIMEOUT:-900}"
only="${REPLAY_ONLY:-.}"

if [[ ! -d "$swf_dir" ]]; then
  echo "replay_bench: no shared traces at $swf_dir (../shared is absent here); nothing to replay."
  exit 0
fi
if [[ ! -x "$bin" ]]; then
  echo "replay_bench: no lockstep binary at $bin; build it (ninja -C build-bench lockstep) or set LOCKSTEP_BIN." >&2
  exit 1
fi

# json_get FILE KEY...: one number per key (a.b for nested keys), "-" when absent.
if command -v jq >/dev/null; then
  json_get() {
    local f="$1"; shift
    local k
    for k in "$@"; do jq -r ".${k} // \"-\"" "$f"; done
  }
else
  json_get() {
    python3 - "$@" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2:]:
    v = d
    for part in k.split("."):
        v = v.get(part) if isinstance(v, dict) else None
    print("-" if v is None else v)
EOF
  }
fi

# Formats a number of seconds (or "-") to a short figure.
fmt() { [[ "$1" == "-" ]] && echo "-" || printf "%.${2:-0}f" "$1"; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The runs, in order: EASY and FCFS on every trace, conservative on the small ones, the Alibaba
# pods, and last the slow ones on lublin_256 (offered load 106%: queues grow to thousands of
# jobs), FCFS (~35 s here) and conservative (~8 min here, because every pass makes 100
# reservations in a queue of thousands).
runs=()     # "label|policy|args..."
last=()     # the same, run at the end
skipped=()  # "label|policy|reason"
for f in "$swf_dir"/*.swf "$swf_dir"/*.swf.gz; do
  [[ -e "$f" ]] || continue
  name="$(basename "$f")"
  [[ "$name" =~ $only ]] || continue
  label="${name%.gz}"; label="${label%.swf}"
  jobs=$( (if [[ "$f" == *.gz ]]; then gzip -dc "$f"; else cat "$f"; fi) | grep -vc '^;')
  for policy in easy fcfs conservative; do
    # Conservative (depth 100) only on traces of at most 50,000 jobs: HPC2N would take long.
    if [[ "$policy" == conservative ]] && (( jobs > 50000 )); then
      skipped+=("$label|conservative|$jobs jobs: conservative runs only on traces of at most 50,000")
      continue
    fi
    if [[ "$label" == lublin_256 && "$policy" != easy ]]; then
      if [[ "$policy" == conservative && "${REPLAY_SKIP_SLOW:-0}" == 1 ]]; then
        skipped+=("$label|conservative|REPLAY_SKIP_SLOW=1 (takes ~8 min: 100 reservations a pass in a queue of thousands)")
      else
        last+=("$label|$policy|--trace|$f")
      fi
      continue
    fi
    runs+=("$label|$policy|--trace|$f")
  done
done
if [[ -f "$alibaba" && "alibaba_openb_default" =~ $only ]]; then
  runs+=("alibaba_openb_default|easy|--trace|$alibaba|--format|alibaba")
  runs+=("alibaba_openb_default|fcfs|--trace|$alibaba|--format|alibaba")
fi
runs+=("${last[@]}")

echo "lockstep sim replay: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "binary: $bin"
echo

rows=()
i=0
for run in "${runs[@]}"; do
  IFS='|' read -r -a parts <<<"$run"
  label="${parts[0]}"; policy="${parts[1]}"; args=("${parts[@]:2}")
  out="$tmp/$i.json"; i=$((i + 1))
  echo "running $label $policy ..." >&2
  t0=$(date +%s.%N)
  timeout "$timeout_s" "$bin" sim "${args[@]}" --policy "$policy" --json >"$out" 2>"$out.err"
  rc=$?
  t1=$(date +%s.%N)
  wall=$(echo "$t1 - $t0" | bc -l)
  if (( rc == 124 )); then
    skipped+=("$label|$policy|stopped after ${timeout_s} s (REPLAY_TIMEOUT)")
    continue
  elif (( rc != 0 )); then
    skipped+=("$label|$policy|failed (exit $rc): $(head -c 200 "$out.err")")
    continue
  fi
  mapfile -t v < <(json_get "$out" policy jobs scheduler_seconds plan_calls utilization mean_wait_s p95_wait_s \
                              mean_bsld recorded.mean_wait_s recorded.mean_bsld)
  rows+=("$label|$policy|${v[0]}|${v[1]}|$wall|${v[2]}|${v[3]}|${v[4]}|${v[5]}|${v[6]}|${v[7]}|${v[8]}|${v[9]}")
done

echo "| trace | policy | jobs | wall s | scheduler s | plan calls | utilization | mean wait s | p95 wait s | mean bsld | recorded mean wait s | recorded mean bsld |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
# Grouped by trace, in the order the traces were first run.
labels=()
declare -A listed=()
for r in "${rows[@]}"; do
  IFS='|' read -r label _ <<<"$r"
  [[ -n "${listed[$label]:-}" ]] || { labels+=("$label"); listed[$label]=1; }
done
for want in "${labels[@]}"; do
for r in "${rows[@]}"; do
  IFS='|' read -r label policy name jobs wall sched calls util mw p95 bsld rmw rbsld <<<"$r"
  [[ "$label" == "$want" ]] || continue
  printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$label" "$name" "$jobs" \
    "$(fmt "$wall" 1)" "$(fmt "$sched" 2)" "$calls" "$(fmt "$util" 4)" "$(fmt "$mw")" "$(fmt "$p95")" \
    "$(fmt "$bsld" 2)" "$(fmt "$rmw")" "$(fmt "$rbsld" 2)"
done
done
for s in "${skipped[@]}"; do
  IFS='|' read -r label policy reason <<<"$s"
  printf "| %s | %s | not run: %s | | | | | | | | | |\n" "$label" "$policy" "$reason"
done

# verdict FCFS EASY: does EASY's figure beat FCFS's (lower is better)?
verdict() {
  if [[ -z "$1" || -z "$2" || "$1" == "-" || "$2" == "-" ]]; then echo "n/a (a run is missing)"; return; fi
  if (( $(echo "$2 < $1" | bc -l) )); then
    if (( $(echo "$2 > 0" | bc -l) )); then echo "yes ($(printf '%.2f' "$(echo "$1 / $2" | bc -l)")x lower)"
    else echo "yes"; fi
  elif (( $(echo "$2 == $1" | bc -l) )); then echo "tie"
  else echo "NO (easy $(printf '%.2f' "$(echo "$2 / $1" | bc -l)")x higher)"; fi
}

echo
echo "EASY against FCFS (lower is better):"
echo
echo "| trace | mean bsld fcfs | mean bsld easy | easy beats fcfs on bsld | mean wait fcfs s | mean wait easy s | easy beats fcfs on wait |"
echo "|---|---:|---:|---|---:|---:|---|"
declare -A seen=()
for r in "${rows[@]}"; do
  IFS='|' read -r label _ <<<"$r"
  [[ -n "${seen[$label]:-}" ]] && continue
  seen[$label]=1
  fb="" eb="" fw="" ew=""
  for q in "${rows[@]}"; do
    IFS='|' read -r l2 p2 _ _ _ _ _ _ mw _ bsld _ _ <<<"$q"
    [[ "$l2" != "$label" ]] && continue
    [[ "$p2" == fcfs ]] && fb="$bsld" fw="$mw"
    [[ "$p2" == easy ]] && eb="$bsld" ew="$mw"
  done
  printf "| %s | %s | %s | %s | %s | %s | %s |\n" "$label" "$(fmt "${fb:--}" 2)" "$(fmt "${eb:--}" 2)" \
    "$(verdict "$fb" "$eb")" "$(fmt "${fw:--}")" "$(fmt "${ew:--}")" "$(verdict "$fw" "$ew")"
done
exit 0
