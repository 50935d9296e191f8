#!/usr/bin/env bash
# `lockstep sim --policy easy` against bench/easy_reference.py, side by side on every SWF log of
# ../shared/data/swf: each run alternates the two, REPS times (default 3), and the table gives
# the median wall and CPU (user + sys) seconds of each, their ratio, and the two schedules'
# mean wait and mean bounded slowdown with their relative difference.
#
#   bench/sim_vs_python.sh                        # from the repository root
#   LOCKSTEP_BIN=build/bin/lockstep REPS=5 bench/sim_vs_python.sh
#
# Exits 0 without running anything when the shared data is absent.
set -u -o pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
bin="${LOCKSTEP_BIN:-$root/build-bench/bin/lockstep}"
[[ -x "$bin" ]] || bin="$root/build/bin/lockstep"
shared="${LOCKSTEP_SHARED_DIR:-$root/../shared}"
swf_dir="$shared/data/swf"
reps="${REPS:-3}"
if [[ ! -d "$swf_dir" ]]; then
  echo "no traces in $swf_dir: nothing to compare"
  exit 0
fi

# Runs a command, prints "wall cpu" seconds on stderr's last line and its stdout to $out.
timed() {
  local out="$1"
  shift
  /usr/bin/time -f "%e %U %S" -o "$out.time" "$@" > "$out" 2> /dev/null
  awk '{printf "%s %.2f\n", $1, $2 + $3}' "$out.time"
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "| log | jobs | lockstep wall s | Python wall s | Python/lockstep wall | lockstep CPU s | Python CPU s | Python/lockstep CPU | mean wait lockstep / Python | mean bsld lockstep / Python |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for trace in "$swf_dir"/*.swf "$swf_dir"/*.swf.gz; do
  [[ -f "$trace" ]] || continue
  name="$(basename "$trace")"
  : > "$tmp/ls_wall"; : > "$tmp/ls_cpu"; : > "$tmp/py_wall"; : > "$tmp/py_cpu"
  for ((i = 0; i < reps; i++)); do
    read -r w c < <(timed "$tmp/ls.json" "$bin" sim --trace "$trace" --policy easy --json)
    echo "$w" >> "$tmp/ls_wall"; echo "$c" >> "$tmp/ls_cpu"
    read -r w c < <(timed "$tmp/py.json" python3 "$here/easy_reference.py" "$trace" --json)
    echo "$w" >> "$tmp/py_wall"; echo "$c" >> "$tmp/py_cpu"
  done
  python3 - "$name" "$tmp" <<'PY'
import json, statistics, sys
name, tmp = sys.argv[1], sys.argv[2]
read = lambda f: [float(x) for x in open(f"{tmp}/{f}").read().split()]
lw, lc, pw, pc = (statistics.median(read(f)) for f in ("ls_wall", "ls_cpu", "py_wall", "py_cpu"))
ls, py = json.load(open(f"{tmp}/ls.json")), json.load(open(f"{tmp}/py.json"))
rel = lambda a, b: f"{a:,.1f} / {b:,.1f} ({100 * (a - b) / b:+.1f}%)"
print(f"| {name} | {ls['jobs']:,} | {lw:.2f} | {pw:.2f} | {pw / lw:.2f}x | {lc:.2f} | {pc:.2f} | "
      f"{pc / lc:.2f}x | {rel(ls['mean_wait_s'], py['mean_wait_s'])} | "
      f"{rel(ls['mean_bsld'], py['mean_bsld'])} |")
PY
done
