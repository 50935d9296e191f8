#!/usr/bin/env bash
# `lockstep sim --policy easy` against bench/easy_reference.py, side by side on every SWF log of
# ../shared/data/swf, with the same textbook EASY in plain C++ (build/bin/easy_reference) as a
# second yardstick: each run alternates the three, REPS times (default 3), and the table gives
# the median CPU (user + sys) seconds of each, their ratios, and lockstep's mean wait and mean
# bounded slowdown against the Python's, with their relative difference. The C++ port must
# give the Python's very schedule: the last column says whether it did.
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
cxx="$(dirname "$bin")/easy_reference"
# The interpreter itself, not a launcher in front of it (a pyenv shim is a bash script that
# costs 50 ms of CPU a run).
python="${PYTHON:-$(python3 -c 'import sys; print(sys.executable)')}"
[[ -x "$cxx" ]] || { echo "no $cxx: build the easy_reference target"; exit 1; }
shared="${LOCKSTEP_SHARED_DIR:-$root/../shared}"
swf_dir="$shared/data/swf"
reps="${REPS:-3}"
if [[ ! -d "$swf_dir" ]]; then
  echo "no traces in $swf_dir: nothing to compare"
  exit 0
fi

# Runs a command with its stdout to $out; prints "wall cpu" seconds of the command alone (CPU:
# user + sys from getrusage, to the microsecond: /usr/bin/time rounds to 10 ms).
timed() {
  local out="$1"
  shift
  python3 - "$out" "$@" <<'PY'
import resource, subprocess, sys, time
cpu = lambda r: r.ru_utime + r.ru_stime
before = resource.getrusage(resource.RUSAGE_CHILDREN)  # not 0: Python's start may run some
t0 = time.perf_counter()
with open(sys.argv[1], "w") as out:
    subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.DEVNULL, check=False)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{time.perf_counter() - t0:.4f} {cpu(after) - cpu(before):.4f}")
PY
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "| log | jobs | lockstep CPU s | C++ EASY CPU s | Python CPU s | Python / lockstep | Python / C++ | lockstep / C++ | mean wait lockstep / Python | mean bsld lockstep / Python | C++ = Python |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
for trace in "$swf_dir"/*.swf "$swf_dir"/*.swf.gz; do
  [[ -f "$trace" ]] || continue
  name="$(basename "$trace")"
  : > "$tmp/ls_cpu"; : > "$tmp/cc_cpu"; : > "$tmp/py_cpu"
  for ((i = 0; i < reps; i++)); do
    read -r _ c < <(timed "$tmp/ls.json" "$bin" sim --trace "$trace" --policy easy --json)
    echo "$c" >> "$tmp/ls_cpu"
    read -r _ c < <(timed "$tmp/cc.json" "$cxx" "$trace")
    echo "$c" >> "$tmp/cc_cpu"
    read -r _ c < <(timed "$tmp/py.json" "$python" "$here/easy_reference.py" "$trace" --json)
    echo "$c" >> "$tmp/py_cpu"
  done
  python3 - "$name" "$tmp" <<'PY'
import json, statistics, sys
name, tmp = sys.argv[1], sys.argv[2]
read = lambda f: [float(x) for x in open(f"{tmp}/{f}").read().split()]
lc, cc, pc = (statistics.median(read(f)) for f in ("ls_cpu", "cc_cpu", "py_cpu"))
ls, cx, py = (json.load(open(f"{tmp}/{f}.json")) for f in ("ls", "cc", "py"))
rel = lambda a, b: f"{a:,.1f} / {b:,.1f} ({100 * (a - b) / b:+.1f}%)"
ratio = lambda a, b: f"{a / b:.1f}x" if b > 0 else "-"
same = all(abs(cx[k] - py[k]) <= 1e-6 * max(1.0, abs(py[k]))
           for k in ("jobs", "never_started", "mean_wait_s", "mean_bsld"))
print(f"| {name} | {ls['jobs']:,} | {lc:.3f} | {cc:.3f} | {pc:.3f} | {ratio(pc, lc)} | "
      f"{ratio(pc, cc)} | {ratio(lc, cc)} | {rel(ls['mean_wait_s'], py['mean_wait_s'])} | "
      f"{rel(ls['mean_bsld'], py['mean_bsld'])} | {'yes' if same else 'NO'} |")
PY
done
