#!/bin/bash
# A real Kubernetes node on this machine for lockstep's tests: Debian's containerd, runc and CNI
# plugins, and a kubelet v1.20.2 built from Debian's 'kubernetes' source package (the same build
# as scripts/kube-apiserver.sh), registering with the apiserver that kube-apiserver.sh started.
# Images come without a registry: local/busybox:1 (Debian's busybox-static) and the pause image
# (Kubernetes' own pause.c) are made at build and imported at up; more docker-archive tarballs
# (scripts/image.sh) are imported with `import` or named in KUBE_NODE_IMAGES.
#
#   scripts/kube-node.sh build          # once: packages, kubelet (39 s after the apiserver's), images
#   scripts/kube-node.sh up             # containerd + kubelet; waits for the Node to be Ready
#   scripts/kube-node.sh down           # deletes every pod, stops all by PID, cleans the host
#   scripts/kube-node.sh stop-kubelet | start-kubelet   # the kubelet alone (containerd kept)
#   scripts/kube-node.sh import FILE.tar                # one more image into the running node
#   scripts/kube-node.sh controllers    # kube-controller-manager too (Deployments, ReplicaSets,
#                                       # DaemonSets, Endpoints, claims, kube-root-ca.crt) and
#                                       # kube-scheduler (DaemonSets' pods): deploy/kubernetes
#   scripts/kube-node.sh check          # why this host cannot run a node (exit 1), or nothing
#   scripts/kube-node.sh status
#
# Environment:
#   KUBE_WORK   as kube-apiserver.sh (binaries, build cache; images in $KUBE_WORK/node-images)
#   KUBE_RUN    the apiserver's run state (its kubeconfig); the node's state goes to
#               $KUBE_RUN/node (containerd's root, kubelet's root, logs, pids)
#   NODE_NAME   the Node's name (default: this host's name, which must resolve to a local address:
#               the apiserver reaches the kubelet's logs and exec through it)
#   KUBE_POD_CIDR     the pods' bridge (default 10.244.77.0/24: this machine only, no masquerading)
#   KUBE_NODE_IMAGES  more docker-archive tarballs to import at up, space-separated
#   KUBELET_PORT      (10250) the kubelet's API, on 127.0.0.1
#   KUBE_OWNER_PID    with up: a watchdog runs `down` once this process is gone
# One node per machine at a time (the bridge, the kubelet's ports and /var/log/pods are the
# host's): tests take `flock /tmp/kube-tests.lock` around it.
set -euo pipefail

W=${KUBE_WORK:-/var/tmp/kube-apiserver}
RUN=${KUBE_RUN:-$W/run}
N=$RUN/node
IMAGES=$W/node-images
here=$(cd "$(dirname "$0")" && pwd)
cmd=${1:-}
shift || true
if [ "$cmd" != up ] && [ "$cmd" != build ] && [ -f "$N/env" ]; then
  # shellcheck disable=SC1091
  . "$N/env"
fi
NODE=${NODE_NAME:-$(hostname)}
POD_CIDR=${KUBE_POD_CIDR:-10.244.77.0/24}
KUBELET_PORT=${KUBELET_PORT:-10250}
SOCK=$N/run/containerd.sock
PACKAGES="containerd runc containernetworking-plugins busybox-static gcc libc6-dev iproute2 iptables python3"

log() { echo "kube-node.sh: $*" >&2; }
alive() { [ -f "$N/run/$1.pid" ] && kill -0 "$(cat "$N/run/$1.pid")" 2>/dev/null; }
ctr_() { ctr --address "$SOCK" -n k8s.io "$@"; }

# Why this host cannot run a node, or nothing. Tests skip with this message.
unsupported() {
  [ "$(id -u)" = 0 ] || { echo "a node needs root (containerd, mounts, network namespaces)"; return; }
  [ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] \
    || { echo "no cgroup file system at /sys/fs/cgroup"; return; }
  grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null \
    || { echo "no overlay file system in this kernel (containerd's snapshotter)"; return; }
  getent hosts "$NODE" >/dev/null || { echo "this host's name $NODE does not resolve"; return; }
  local probe cg
  probe=$(mktemp -d); trap 'rmdir "$probe" 2>/dev/null' RETURN
  mount -t tmpfs lockstep-check "$probe" 2>/dev/null && umount "$probe" \
    || { echo "cannot mount file systems (no CAP_SYS_ADMIN: an unprivileged container?)"; return; }
  cg=/sys/fs/cgroup/memory; [ -d "$cg" ] || cg=/sys/fs/cgroup
  mkdir "$cg/lockstep-check.$$" 2>/dev/null && rmdir "$cg/lockstep-check.$$" \
    || { echo "cannot create cgroups under $cg (read-only cgroup file system?)"; return; }
  true
}

# The busybox and pause images, made once from Debian's busybox-static and Kubernetes' pause.c.
make_images() {
  [ -f "$IMAGES/busybox.tar" ] && [ -f "$IMAGES/pause.tar" ] && return 0
  local tmp app d
  tmp=$(mktemp -d "$W/node-images.XXXXXX")
  mkdir -p "$IMAGES" "$tmp/busybox/bin" "$tmp/pause"
  cp /bin/busybox "$tmp/busybox/bin/busybox"
  for app in $(/bin/busybox --list-full); do
    d="$tmp/busybox/$(dirname "$app")"; mkdir -p "$d"
    [ -e "$tmp/busybox/$app" ] || ln -s /bin/busybox "$tmp/busybox/$app"
  done
  mkdir -p "$tmp/busybox"/{etc,tmp,proc,sys,dev,root,var/run}; chmod 1777 "$tmp/busybox/tmp"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' > "$tmp/busybox/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' > "$tmp/busybox/etc/group"
  python3 "$here/docker_archive.py" "$tmp/busybox" local/busybox:1 "$IMAGES/busybox.tar" --cmd '["sh"]' >/dev/null
  gcc -Os -static -DVERSION=v3.2-local -o "$tmp/pause/pause" "$W/src/kubernetes-1.20.2/build/pause/linux/pause.c"
  strip "$tmp/pause/pause"
  python3 "$here/docker_archive.py" "$tmp/pause" local/pause:3.2 "$IMAGES/pause.tar" --entrypoint '["/pause"]' >/dev/null
  rm -rf "$tmp"
}

build() {
  local t0 p missing=""
  t0=$(date +%s)
  for p in containerd runc ctr gcc python3 ip iptables; do command -v $p >/dev/null || missing=1; done
  [ -x /usr/lib/cni/bridge ] && [ -x /bin/busybox ] || missing=1
  if [ -n "$missing" ]; then
    apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $PACKAGES >/dev/null
  fi
  "$here/kube-apiserver.sh" build kubelet >/dev/null
  make_images
  log "node built in $(( $(date +%s) - t0 )) s"
  echo "$W/bin"
}

write_configs() {
  mkdir -p "$N"/{run,logs,containerd/root,containerd/state,cni/net.d,cni/ipam,kubelet/root}
  cat > "$N/cni/net.d/10-lockstep-node.conflist" <<JSON
{"cniVersion": "0.4.0", "name": "lockstep-node", "plugins": [{"type": "bridge", "bridge": "kubenode0",
 "isGateway": true, "ipMasq": false, "hairpinMode": true,
 "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "dataDir": "$N/cni/ipam"}}]}
JSON
  # Without CAP_SYS_RESOURCE (containers, some sandboxes) oom_score_adj cannot go below 0:
  # restrict_oom_score_adj keeps pods starting there.
  cat > "$N/containerd/config.toml" <<TOML
version = 2
root = "$N/containerd/root"
state = "$N/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[debug]
  address = "$N/run/containerd-debug.sock"
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/local/pause:3.2"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$N/cni/net.d"
TOML
  # No static pods, no image garbage collection (the local images cannot be pulled again), no
  # eviction (a small test machine), the host's cgroups as they are.
  cat > "$N/kubelet/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBELET_PORT
readOnlyPort: 0
healthzPort: 0
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {}
staticPodPath: ""
serializeImagePulls: false
makeIPTablesUtilChains: false
nodeStatusUpdateFrequency: 2s
YAML
  cp "$RUN/kubeconfig" "$N/kubelet/kubeconfig"
}

start_containerd() {
  alive containerd && return 0
  /usr/bin/containerd --config "$N/containerd/config.toml" >> "$N/logs/containerd.log" 2>&1 &
  echo $! > "$N/run/containerd.pid"
  local _
  for _ in $(seq 1 80); do
    ctr --address "$SOCK" version >/dev/null 2>&1 && return 0
    alive containerd || { log "containerd died; see $N/logs/containerd.log"; tail -20 "$N/logs/containerd.log" >&2; exit 1; }
    sleep 0.25
  done
  log "containerd not answering after 20 s; see $N/logs/containerd.log"; exit 1
}

# The apiserver, as its admin (kube-apiserver.sh's token and CA; no kubectl needed).
api() {  # api METHOD PATH [curl args...]
  local m=$1 p=$2; shift 2
  # shellcheck disable=SC1091
  curl -sf -X "$m" --cacert "$RUN/pki/ca.crt" -H "Authorization: Bearer $(cat "$RUN/token")" \
    "https://127.0.0.1:$(. "$RUN/env"; echo "$API_PORT")$p" "$@"
}

node_ready() {
  api GET "/api/v1/nodes/$NODE" 2>/dev/null | python3 -c '
import json, sys
conds = json.load(sys.stdin).get("status", {}).get("conditions", [])
print(next((c["status"] for c in conds if c["type"] == "Ready"), ""))' 2>/dev/null || true
}

start_kubelet() {
  alive kubelet && { log "kubelet already running (pid $(cat "$N/run/kubelet.pid"))"; return 0; }
  "$W/bin/kubelet" --config="$N/kubelet/config.yaml" --kubeconfig="$N/kubelet/kubeconfig" \
    --root-dir="$N/kubelet/root" --container-runtime=remote \
    --container-runtime-endpoint="unix://$SOCK" --pod-infra-container-image=docker.io/local/pause:3.2 \
    --hostname-override="$NODE" --v=1 >> "$N/logs/kubelet.log" 2>&1 &
  echo $! > "$N/run/kubelet.pid"
  local _
  for _ in $(seq 1 240); do
    [ "$(node_ready)" = True ] && return 0
    alive kubelet || { log "kubelet died; see $N/logs/kubelet.log"; tail -20 "$N/logs/kubelet.log" >&2; exit 1; }
    sleep 0.25
  done
  log "node $NODE not Ready after 60 s; see $N/logs/kubelet.log"; exit 1
}

# The controllers that `kubectl apply -k deploy/kubernetes` needs: Deployments make ReplicaSets,
# which make pods; DaemonSets make pods for kube-scheduler to bind (they name no node); Endpoints
# for Services; claims bound to volumes; the kube-root-ca.crt ConfigMap of each namespace (for
# projected service account volumes). Built with `kube-apiserver.sh build kube-controller-manager
# kube-scheduler`. kube-scheduler binds only pods of the default scheduler: lockstep's name their node.
start_controllers() {
  start_scheduler
  alive controller-manager && return 0
  [ -x "$W/bin/kube-controller-manager" ] || { log "run '$here/kube-apiserver.sh build kube-controller-manager' first"; exit 1; }
  "$W/bin/kube-controller-manager" --kubeconfig="$RUN/kubeconfig" --leader-elect=false \
    --controllers=deployment,replicaset,daemonset,endpoint,root-ca-cert-publisher,persistentvolume-binder \
    --root-ca-file="$RUN/pki/ca.crt" --pvclaimbinder-sync-period=1s --port=0 --secure-port=0 --v=1 \
    >> "$N/logs/kube-controller-manager.log" 2>&1 &
  echo $! > "$N/run/controller-manager.pid"
}

start_scheduler() {
  alive scheduler && return 0
  [ -x "$W/bin/kube-scheduler" ] || { log "run '$here/kube-apiserver.sh build kube-scheduler' first"; exit 1; }
  "$W/bin/kube-scheduler" --kubeconfig="$RUN/kubeconfig" --leader-elect=false --port=0 \
    --secure-port=0 --v=1 >> "$N/logs/kube-scheduler.log" 2>&1 &
  echo $! > "$N/run/scheduler.pid"
}

stop() {  # stop NAME: by the recorded PID only
  local f="$N/run/$1.pid" pid _
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    log "stopped $1 (pid $pid)"
  fi
  rm -f "$f"
}

case "$cmd" in
  build) build ;;
  check) why=$(unsupported); [ -z "$why" ] || { echo "$why"; exit 1; } ;;
  up)
    why=$(unsupported); [ -z "$why" ] || { log "$why"; exit 3; }
    [ -x "$W/bin/kubelet" ] && [ -f "$IMAGES/pause.tar" ] || { log "not built: run '$0 build' first"; exit 1; }
    [ -f "$RUN/kubeconfig" ] || { log "no $RUN/kubeconfig: run kube-apiserver.sh up first"; exit 1; }
    t0=$(date +%s%3N)
    write_configs
    printf 'NODE_NAME=%s\nKUBE_POD_CIDR=%s\nKUBELET_PORT=%s\n' "$NODE" "$POD_CIDR" "$KUBELET_PORT" > "$N/env"
    cat /proc/sys/net/ipv4/ip_forward > "$N/run/ip_forward.orig"
    start_containerd
    for img in "$IMAGES/busybox.tar" "$IMAGES/pause.tar" ${KUBE_NODE_IMAGES:-}; do
      ctr_ images import "$img" >/dev/null
    done
    start_kubelet
    if [ -n "${KUBE_OWNER_PID:-}" ]; then
      (trap '' HUP; while kill -0 "$KUBE_OWNER_PID" 2>/dev/null; do sleep 1; done
       KUBE_RUN=$RUN "$0" down) </dev/null >/dev/null 2>&1 &
      echo $! > "$N/run/watchdog.pid"
    fi
    echo "node $NODE Ready in $(( $(date +%s%3N) - t0 )) ms (containerd pid $(cat "$N/run/containerd.pid"), kubelet pid $(cat "$N/run/kubelet.pid"))"
    ;;
  down)
    # shellcheck source=kube-node-down.sh
    . "$here/kube-node-down.sh"
    node_down
    ;;
  controllers) start_controllers
    echo "kube-controller-manager pid $(cat "$N/run/controller-manager.pid"), kube-scheduler pid $(cat "$N/run/scheduler.pid")" ;;
  stop-kubelet) stop kubelet ;;
  start-kubelet) start_kubelet; echo "kubelet pid $(cat "$N/run/kubelet.pid")" ;;
  import)
    [ $# -ge 1 ] || { log "usage: $0 import FILE.tar"; exit 2; }
    alive containerd || { log "the node is not up"; exit 1; }
    for img in "$@"; do ctr_ images import "$img" >&2; done
    ;;
  status)
    for p in containerd kubelet controller-manager scheduler; do
      if alive $p; then echo "$p running (pid $(cat "$N/run/$p.pid"))"; else echo "$p stopped"; fi
    done
    ;;
  *) sed -n '2,30p' "$0" >&2; exit 2 ;;
esac
