#!/usr/bin/env bash
# Builds the fuzz tree (./build-fuzz: clang, libFuzzer, ASan and UBSan) and runs every fuzz
# target over its seed corpus for SECONDS each (default 20), as CI does after the tests.
# Fails on the first target that crashes, leaks, times out or breaks a property it checks; the
# input that did it is left in build-fuzz/findings/<target>/ (crash-*, leak-*, timeout-*), and
#   build-fuzz/bin/<target> build-fuzz/findings/<target>/crash-...
# replays it. New inputs that grew coverage go to build-fuzz/corpus-new/<target>, never into the
# committed seeds (fuzz/corpus/<target>), which stay small and reviewed.
#   scripts/fuzz.sh            # 20 s per target
#   scripts/fuzz.sh 5          # a smoke run
#   FUZZ_TARGETS="sbatch_fuzz api_routes_fuzz" scripts/fuzz.sh 300
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
build="build-fuzz"

launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# -O1 with line tables only: quick to build, and crash reports still name file and line;
# without -DNDEBUG, so that assertions (ours, nlohmann's) are checked while fuzzing.
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DLOCKSTEP_BUILD_FUZZERS=ON \
  -DLOCKSTEP_BUILD_TESTS=OFF -DLOCKSTEP_BUILD_BENCHMARKS=OFF "${launcher[@]}" >/dev/null

# The targets are those fuzz/CMakeLists.txt declares, each with its corpus folder.
all_targets=$(sed -n 's/^lockstep_cc_fuzzer(NAME \([a-z_]*\) .*/\1/p' fuzz/CMakeLists.txt)
targets="${FUZZ_TARGETS:-$all_targets}"
# shellcheck disable=SC2086  # word splitting of the target list is wanted
cmake --build "$build" --parallel "$(nproc)" --target $targets
echo "fuzz: the fuzz tree configured and built in ${SECONDS}s"

failed=()
for t in $targets; do
  seeds="fuzz/corpus/$t"
  [ -d "$seeds" ] || { echo "fuzz: $t has no corpus folder $seeds" >&2; exit 1; }
  findings="$build/findings/$t"
  new_inputs="$build/corpus-new/$t"
  mkdir -p "$findings" "$new_inputs"
  echo "fuzz: $t for ${seconds}s"
  # stdin from /dev/null: no input can make a target wait on the terminal. -timeout: an input
  # that takes longer than 10 s is a finding (a hang), well before the budget ends.
  if ! "$build/bin/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix="$findings/" "$new_inputs" "$seeds" \
      </dev/null >"$findings/log" 2>&1; then
    tail -n 60 "$findings/log" >&2
    failed+=("$t")
  else
    grep -E '^(stat::number_of_executed_units|#[0-9]+ +DONE)' "$findings/log" | tail -n 1 || true
  fi
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (inputs in $build/findings/)" >&2
  exit 1
fi
echo "fuzz: every target ran ${seconds}s without a finding"
