#!/usr/bin/env bash
# Configures and builds lockstep into ./build (Release with debug info). Uses ccache when the
# machine has it (developers' machines; CI builds once and does not need it).
# LOCKSTEP_DEBUG_INFO=0 leaves the debug information out (-O2 alone): CI's build, whose binaries
# nobody debugs, a third faster (a controller file: 18.5 s with -g, 11.9 s without, on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
flags="-O2 -g -DNDEBUG"  # CMake's own RelWithDebInfo
if [[ "${LOCKSTEP_DEBUG_INFO:-1}" == 0 ]]; then flags="-O2 -DNDEBUG"; fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$flags" "${launcher[@]}" >/dev/null
cmake --build build --parallel "$(nproc)"
