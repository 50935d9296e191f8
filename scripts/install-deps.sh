#!/usr/bin/env bash
# Installs what lockstep needs to build and test, from Debian's packages. Run as root (or with
# sudo) on Debian bookworm. The one place that sets a machine up: .ci/run and the README use it.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  libboost-dev libssl-dev zlib1g-dev libsqlite3-dev
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libfmt-dev libspdlog-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  protobuf-compiler libprotobuf-dev
  # The fuzzers (scripts/fuzz.sh): clang, libclang-rt-14-dev for its libFuzzer, ASan and UBSan
  # runtimes (only recommended by clang, so named here), llvm for llvm-symbolizer (findings
  # reported with file and line).
  clang libclang-rt-14-dev llvm
  # The real Kubernetes node of the tests (scripts/kube-node.sh) and lockstep's image without a
  # registry (scripts/image.sh): containerd, runc, the CNI plugins, busybox for the images.
  containerd runc containernetworking-plugins busybox-static iptables iproute2 python3
  ca-certificates binutils
  # Login pods' own sshd in lockstep's image (scripts/image.sh, docs/login.md) and the ssh client
  # of its test.
  openssh-server openssh-client
  # tests/observe_test: the metrics read by Prometheus' own text parser; curl for the
  # metrics-only listener.
  python3-prometheus-client curl
  # tests/web_test: the web view in Debian's chromium, driven by puppeteer-core from npm.
  chromium
  # srun --mpi=pmix (docs/mpi.md): OpenPMIx for the agent's PMIx server; Open MPI's mpicc and
  # Slurm's PMI-2 client library for tests/mpi_test's programs.
  libpmix-dev openmpi-bin libopenmpi-dev libpmi2-0-dev
)
# Node.js and npm for puppeteer-core: Debian's, unless the machine already has them (a
# NodeSource nodejs carries its own npm and conflicts with Debian's npm package).
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  # No service starts from a package here (openssh-server would start an sshd on port 22):
  # policy-rc.d says no to every start while it exists (only when none was there).
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | "${sudo_cmd[@]}" tee /usr/sbin/policy-rc.d >/dev/null
    "${sudo_cmd[@]}" chmod 755 /usr/sbin/policy-rc.d
    trap '"${sudo_cmd[@]}" rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# puppeteer-core (tests/web/package-lock.json) into tests/web/node_modules, not committed.
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ ! -d "$repo/tests/web/node_modules/puppeteer-core" ]; then
  npm ci --no-audit --no-fund --prefix "$repo/tests/web"
fi
