#!/bin/bash
# Installation on a real node, measured: runs kubernetes_node_test's DeployTest (a real apiserver,
# containerd + kubelet, kube-controller-manager; `kubectl apply -k` of deploy/kubernetes through
# the test's overlay) RUNS times and prints, per run, the seconds from `kubectl apply -k` to the
# first job's two pods Running and from the leader pod's deletion to another replica serving.
# Takes the Kubernetes tests' lock. Needs scripts/kube-node.sh build and
# scripts/kube-apiserver.sh build kubectl kube-controller-manager.
#   bench/kube_install.sh [RUNS]        (default 3)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-3}
cmake --build "$root/build" --target kubernetes_node_test lockstep lockstepd >/dev/null
for i in $(seq 1 "$runs"); do
  out=$(flock /tmp/kube-tests.lock "$root/build/bin/kubernetes_node_test" \
          --gtest_filter='DeployTest.*' 2>&1) || { echo "$out" | tail -30 >&2; exit 1; }
  apply=$(echo "$out" | sed -n 's/.*Running: \([0-9.]*\) s$/\1/p')
  failover=$(echo "$out" | sed -n 's/.*serving: \([0-9.]*\) s$/\1/p')
  echo "run $i: apply -k to first job running ${apply} s; leader deleted to standby serving ${failover} s"
done
