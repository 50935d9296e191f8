# shellcheck shell=bash
# The teardown of scripts/kube-node.sh (sourced by it: uses its N, NODE, RUN, api, alive, stop,
# ctr_). Leaves the host as it was: no pod, no container, no shim, no mount under $N, no netns of
# ours, no bridge, no KUBE- iptables chains, ip_forward restored, no pod logs of ours.

# Every pod bound to this node, force-deleted through the API: the kubelet sees them go and stops
# their containers and sandboxes (which runs CNI DEL and removes the network namespaces).
delete_node_pods() {
  local pods
  pods=$(api GET "/api/v1/pods?fieldSelector=spec.nodeName%3D$NODE" 2>/dev/null | python3 -c '
import json, sys
for p in json.load(sys.stdin).get("items", []):
    print(p["metadata"]["namespace"] + "/" + p["metadata"]["name"])' 2>/dev/null || true)
  local p
  for p in $pods; do
    api DELETE "/api/v1/namespaces/${p%%/*}/pods/${p#*/}" -H 'Content-Type: application/json' \
      -d '{"gracePeriodSeconds":0}' >/dev/null 2>&1 || true
  done
}

our_netns() {  # the network namespaces of our sandboxes, from their OCI specs
  alive containerd || return 0
  local c
  for c in $(ctr_ containers ls -q 2>/dev/null); do
    ctr_ containers info "$c" 2>/dev/null | grep -o '/var/run/netns/cni-[0-9a-f-]*' || true
  done | sort -u
}

node_down() {
  local netns="" n left _ t pid m
  if [ -f "$N/run/watchdog.pid" ]; then
    pid=$(cat "$N/run/watchdog.pid"); rm -f "$N/run/watchdog.pid"
    [ "$pid" = "$PPID" ] || kill "$pid" 2>/dev/null || true
  fi
  stop controller-manager  # or it makes the Deployments' pods again
  stop scheduler
  if alive kubelet && alive containerd; then
    delete_node_pods
    for _ in $(seq 1 60); do [ -z "$(ctr_ tasks ls -q 2>/dev/null)" ] && break; sleep 0.5; done
    netns=$(our_netns)
    for _ in $(seq 1 60); do  # CNI DEL runs after the tasks are gone: let it finish
      left=0; for n in $netns; do [ -e "$n" ] && left=1; done; [ $left = 0 ] && break; sleep 0.5
    done
  else
    netns=$(our_netns)
  fi
  stop kubelet
  if alive containerd; then  # what the kubelet left: ctr bypasses the CRI
    for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true; done
    for _ in $(seq 1 20); do [ -z "$(ctr_ tasks ls -q 2>/dev/null | head -1)" ] && break; sleep 0.25; done
    for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks delete -f "$t" >/dev/null 2>&1 || true; done
  fi
  stop containerd
  for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $N/run/containerd.sock" || true); do
    kill -9 "$pid" 2>/dev/null && log "killed leftover shim $pid"
  done
  grep -o " $N/[^ ]*" /proc/mounts | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
  for n in $netns; do [ -e "$n" ] && { umount "$n" 2>/dev/null || true; rm -f "$n"; log "removed leftover netns $n"; }; done
  ip link del kubenode0 2>/dev/null && log "deleted bridge kubenode0"
  remove_kube_chains
  [ -f "$N/run/ip_forward.orig" ] && cat "$N/run/ip_forward.orig" > /proc/sys/net/ipv4/ip_forward
  for m in /sys/fs/cgroup/*/k8s.io; do [ -d "$m" ] && find "$m" -depth -type d -exec rmdir {} + 2>/dev/null; done
  find /var/log/containers -maxdepth 1 -type l -lname '/var/log/pods/*' -delete 2>/dev/null || true
  rm -rf /var/log/pods/*_*_*-*-*-*-*
  # containerd's root and the kubelet's: everything mounted there is gone now
  rm -rf "$N/containerd" "$N/kubelet/root" "$N/cni/ipam"
  log "node $NODE down"
}

# The kubelet's KUBE- chains (KUBE-FIREWALL, KUBE-MARK-DROP, ...), with the rules jumping to them.
remove_kube_chains() {
  local tbl ch r
  command -v iptables >/dev/null || return 0
  for tbl in filter nat mangle; do
    for ch in $(iptables -t $tbl -S 2>/dev/null | awk '$1=="-N" && $2 ~ /^KUBE-/ {print $2}'); do
      iptables -t $tbl -S | awk -v c="$ch" '$1=="-A" && $0 ~ ("-j " c "( |$)") && $2 != c' \
        | sed 's/^-A/-D/' | while read -r r; do eval iptables -t $tbl "$r"; done
      iptables -t $tbl -F "$ch"
    done
    for ch in $(iptables -t $tbl -S 2>/dev/null | awk '$1=="-N" && $2 ~ /^KUBE-/ {print $2}'); do
      iptables -t $tbl -X "$ch"
    done
  done
}
