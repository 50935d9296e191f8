#!/bin/bash
# A real Kubernetes API server (kube-apiserver v1.20.2 over Debian's etcd 3.4) on 127.0.0.1,
# for lockstep's Kubernetes tests. Built from Debian's own 'kubernetes' source package with
# Debian's Go; nothing but Debian's package registry is used.
#
#   scripts/kube-apiserver.sh build              # once, about 4 min on 2 cores; then instant
#   scripts/kube-apiserver.sh up                 # etcd + apiserver; writes $KUBE_RUN/kubeconfig
#   scripts/kube-apiserver.sh down               # stops both, by their recorded PIDs
#   scripts/kube-apiserver.sh restart-apiserver  # stop-apiserver + start-apiserver, etcd kept
#   scripts/kube-apiserver.sh stop-apiserver | start-apiserver
#   scripts/kube-apiserver.sh compact            # compacts etcd's history to its current revision
#   scripts/kube-apiserver.sh status
#
# Environment:
#   KUBE_WORK  sources, Go build cache (about 1.5 GB) and binaries; default /var/tmp/kube-apiserver
#              (the same place other tools of this machine use, so the build is shared)
#   KUBE_RUN   run state: pids, logs, certificates, etcd data, kubeconfig, token; default
#              $KUBE_WORK/run. Tests give each instance its own.
#   API_PORT (6443)  ETCD_PORT (23790)  ETCD_PEER_PORT (23800)
#   KUBE_TOKEN        the admin's bearer token (group system:masters)
#   KUBE_AUTHZ        RBAC | AlwaysAllow (default RBAC)
#   KUBE_APISERVER_EXTRA_ARGS  more apiserver flags, e.g. --watch-cache-sizes=nodes#0
#   KUBE_FRESH=1      wipe etcd data on up
#   KUBE_STOP_TIMEOUT seconds to wait after SIGTERM before SIGKILL (default 10)
#   KUBE_OWNER_PID    with up: a watchdog runs `down` once this process is gone (tests set it,
#                     so a crashed test leaves nothing running)
# `up` records these in $KUBE_RUN/env; the other subcommands read them back from there.
set -euo pipefail

W=${KUBE_WORK:-/var/tmp/kube-apiserver}
RUN=${KUBE_RUN:-$W/run}
cmd=${1:-}
shift || true

if [ "$cmd" != up ] && [ "$cmd" != build ] && [ -f "$RUN/env" ]; then
  # shellcheck disable=SC1091
  . "$RUN/env"
fi
API_PORT=${API_PORT:-6443}
ETCD_PORT=${ETCD_PORT:-23790}
ETCD_PEER_PORT=${ETCD_PEER_PORT:-23800}
TOKEN=${KUBE_TOKEN:-local-test-admin-token}
AUTHZ=${KUBE_AUTHZ:-RBAC}
EXTRA=${KUBE_APISERVER_EXTRA_ARGS:-}
APISERVER=${KUBE_APISERVER_BIN:-$W/bin/kube-apiserver}
ETCD_BIN=${ETCD_BIN:-$(command -v etcd || echo /usr/bin/etcd)}
PKI=$RUN/pki

log() { echo "kube-apiserver.sh: $*" >&2; }
alive() { [ -f "$RUN/$1.pid" ] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }

build() {
  mkdir -p "$W"/{apt/lists/partial,apt/src,src,bin,gocache,gopath/src/k8s.io}
  local t0 built=1 want=(kube-apiserver "$@")
  t0=$(date +%s)
  for w in "${want[@]}"; do [ -x "$W/bin/$w" ] || built=0; done
  if [ "$built" = 1 ] && command -v etcd >/dev/null && command -v etcdctl >/dev/null; then
    echo "$W/bin"; return 0
  fi
  # 1. toolchain and runtime, Debian packages only
  if ! command -v go >/dev/null || ! command -v etcd >/dev/null || ! command -v etcdctl >/dev/null \
     || ! command -v openssl >/dev/null || ! command -v curl >/dev/null \
     || [ ! -d /usr/share/gocode/src/github.com/modern-go/reflect2 ] \
     || [ ! -d /usr/share/gocode/src/github.com/json-iterator/go ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq golang-go etcd-server etcd-client openssl \
      curl golang-github-modern-go-reflect2-dev golang-github-json-iterator-go-dev >/dev/null
  fi
  # 2. the source package, through a private apt configuration adding a deb-src line for the
  #    archive the system already uses (the system's own apt configuration is left alone)
  local src=$W/src/kubernetes-1.20.2
  if [ ! -d "$src" ]; then
    local codename uri
    codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
    uri=$(awk -v c="$codename" '/^URIs:/{u=$2} /^Suites:/{for(i=2;i<=NF;i++) if($i==c){print u; exit}}' \
          /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
    [ -n "$uri" ] || uri=$(awk -v c="$codename" '$1=="deb" {for(i=2;i<=NF;i++) if($i ~ /^[a-z]+:\/\//){u=$i; if($(i+1)==c){print u; exit}}}' \
          /etc/apt/sources.list 2>/dev/null || true)
    [ -n "$uri" ] || { log "no Debian archive found in the apt configuration"; exit 1; }
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $codename main" \
      > "$W/apt/sources.list"
    local apto=(-o Dir::Etc::SourceList="$W/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
                -o Dir::State::Lists="$W/apt/lists")
    apt-get "${apto[@]}" update -qq
    (cd "$W/apt/src" && apt-get "${apto[@]}" source --download-only kubernetes 2>&1 | grep -v unsandboxed || true)
    tar xzf "$W"/apt/src/kubernetes_*.orig.tar.gz -C "$W/src"
    # Go >= 1.18: the vendored reflect2 1.0.1 crashes on map iteration; use Debian's reflect2
    # 1.0.2 and json-iterator 1.1.12 (the bump later Kubernetes releases made)
    local pair d s f
    for pair in "modern-go/reflect2:/usr/share/gocode/src/github.com/modern-go/reflect2" \
                "json-iterator/go:/usr/share/gocode/src/github.com/json-iterator/go"; do
      d=$src/vendor/github.com/${pair%%:*}; s=${pair#*:}
      rm -rf "$d"; mkdir -p "$d"
      for f in "$s"/*.go "$s"/*.s "$s"/LICENSE; do
        [ -f "$f" ] || continue; case "$f" in *_test.go) continue;; esac; cp "$f" "$d/"
      done
    done
  fi
  ln -sfn "$src" "$W/gopath/src/k8s.io/kubernetes"
  export GOPATH=$W/gopath GOCACHE=$W/gocache GO111MODULE=off GOFLAGS= CGO_ENABLED=0
  cd "$GOPATH/src/k8s.io/kubernetes"
  # 3. the generated OpenAPI file is not in the tarball (make generates it)
  if [ ! -f pkg/generated/openapi/zz_generated.openapi.go ]; then
    go build -o "$W/bin/openapi-gen" ./vendor/k8s.io/kube-openapi/cmd/openapi-gen
    local dirs
    dirs=$(find -H . -not \( \( -path ./_\* -o -path ./.\* -o -path ./vendor \) -prune \) -type f -name '*.go' \
           | sed 's|^./staging/src|vendor|; s|/[^/]*$||; s|^./||' | LC_ALL=C sort -u \
           | grep -v -e '^vendor/k8s.io/code-generator/' -e '^vendor/k8s.io/sample-apiserver/' \
           | while read -r d; do find "$d" -maxdepth 1 -type f -name '*.go' -exec grep -l '+k8s:openapi-gen=' {} + 2>/dev/null || true; done \
           | xargs -n1 dirname | LC_ALL=C sort -u | sed 's|^|k8s.io/kubernetes/|' | paste -sd, -)
    "$W/bin/openapi-gen" --logtostderr -i "$dirs" -p k8s.io/kubernetes/pkg/generated/openapi \
      -O zz_generated.openapi -h vendor/k8s.io/code-generator/hack/boilerplate.go.txt \
      -r "$W/api-rule-violations.report" 2>"$W/openapi-gen.log"
  fi
  # 4. GOPATH mode, as the 1.20 Makefile builds (module mode asks for go.mod updates)
  local p=k8s.io/kubernetes/vendor ld="-s -w" pkg
  for pkg in $p/k8s.io/component-base/version $p/k8s.io/client-go/pkg/version; do
    ld="$ld -X $pkg.gitVersion=v1.20.2 -X $pkg.gitMajor=1 -X $pkg.gitMinor=20 -X $pkg.gitTreeState=clean"
  done
  for w in "${want[@]}"; do
    [ -x "$W/bin/$w" ] || go build -ldflags "$ld" -o "$W/bin/$w" "./cmd/$w"
  done
  "$W/bin/kube-apiserver" --version >&2
  log "built in $(( $(date +%s) - t0 )) s"
  echo "$W/bin"
}

certificates() {
  [ -f "$PKI/apiserver.crt" ] && return 0
  mkdir -p "$PKI"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=lockstep-test-ca" \
    -keyout "$PKI/ca.key" -out "$PKI/ca.crt" 2>/dev/null
  cat > "$PKI/apiserver.ext" <<EXT
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
EXT
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
    -keyout "$PKI/apiserver.key" -out "$PKI/apiserver.csr" 2>/dev/null
  openssl x509 -req -in "$PKI/apiserver.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 3650 -extfile "$PKI/apiserver.ext" -out "$PKI/apiserver.crt" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' \
    > "$PKI/client.ext"
  openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=admin" \
    -keyout "$PKI/admin.key" -out "$PKI/admin.csr" 2>/dev/null
  openssl x509 -req -in "$PKI/admin.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 3650 -extfile "$PKI/client.ext" -out "$PKI/admin.crt" 2>/dev/null
  openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
  openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
}

start_etcd() {
  alive etcd && { log "etcd already running (pid $(cat "$RUN/etcd.pid"))"; return 0; }
  mkdir -p "$RUN/etcd-data" "$RUN/logs"; chmod 700 "$RUN/etcd-data"
  "$ETCD_BIN" --name lockstep-test --data-dir "$RUN/etcd-data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "lockstep-test=http://127.0.0.1:$ETCD_PEER_PORT" \
    --quota-backend-bytes=$((2*1024*1024*1024)) >> "$RUN/logs/etcd.log" 2>&1 &
  echo $! > "$RUN/etcd.pid"
  for _ in $(seq 1 60); do
    curl -sf "http://127.0.0.1:$ETCD_PORT/health" >/dev/null 2>&1 && return 0
    alive etcd || { log "etcd died; see $RUN/logs/etcd.log"; tail -20 "$RUN/logs/etcd.log" >&2; exit 1; }
    sleep 0.5
  done
  log "etcd not healthy after 30 s; see $RUN/logs/etcd.log"; exit 1
}

start_apiserver() {
  alive apiserver && { log "apiserver already running (pid $(cat "$RUN/apiserver.pid"))"; return 0; }
  [ -x "$APISERVER" ] || { log "kube-apiserver not built at $APISERVER: run '$0 build' first"; exit 1; }
  mkdir -p "$RUN/logs"
  # shellcheck disable=SC2086
  "$APISERVER" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --secure-port="$API_PORT" --insecure-port=0 \
    --advertise-address=127.0.0.1 --endpoint-reconciler-type=none \
    --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
    --client-ca-file="$PKI/ca.crt" --token-auth-file="$PKI/tokens.csv" \
    --authorization-mode="$AUTHZ" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
    --service-cluster-ip-range=10.0.0.0/24 \
    --disable-admission-plugins=ServiceAccount,TaintNodesByCondition \
    --allow-privileged=true $EXTRA >> "$RUN/logs/kube-apiserver.log" 2>&1 &
  echo $! > "$RUN/apiserver.pid"
  for _ in $(seq 1 240); do
    if curl -sf --cacert "$PKI/ca.crt" -H "Authorization: Bearer $TOKEN" \
         "https://127.0.0.1:$API_PORT/readyz" >/dev/null 2>&1; then return 0; fi
    alive apiserver || { log "kube-apiserver died; see $RUN/logs/kube-apiserver.log"; tail -30 "$RUN/logs/kube-apiserver.log" >&2; exit 1; }
    sleep 0.25
  done
  log "kube-apiserver not ready after 60 s; see $RUN/logs/kube-apiserver.log"; exit 1
}

stop() {  # stop NAME: by the recorded PID only
  local f="$RUN/$1.pid" pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    # kube-apiserver v1.20 waits for open watches on SIGTERM (up to a minute): bound the wait
    for _ in $(seq 1 $(( ${KUBE_STOP_TIMEOUT:-10} * 4 ))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    log "stopped $1 (pid $pid)"
  fi
  rm -f "$f"
}

write_kubeconfig() {
  echo "$TOKEN" > "$RUN/token"
  cat > "$RUN/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $PKI/ca.crt
users:
- name: admin
  user:
    token: $TOKEN
- name: admin-cert
  user:
    client-certificate: $PKI/admin.crt
    client-key: $PKI/admin.key
contexts:
- name: local
  context: {cluster: local, user: admin, namespace: default}
- name: local-cert
  context: {cluster: local, user: admin-cert, namespace: default}
current-context: local
KC
}

case "$cmd" in
  build) build "$@" ;;
  up)
    [ -x "$APISERVER" ] || { log "kube-apiserver not built at $APISERVER: run '$0 build' first"; exit 1; }
    command -v openssl >/dev/null || { log "openssl missing"; exit 1; }
    mkdir -p "$RUN/logs"
    [ "${KUBE_FRESH:-0}" = 1 ] && rm -rf "$RUN/etcd-data"
    cat > "$RUN/env" <<ENV
API_PORT=$API_PORT
ETCD_PORT=$ETCD_PORT
ETCD_PEER_PORT=$ETCD_PEER_PORT
KUBE_TOKEN='$TOKEN'
KUBE_AUTHZ=$AUTHZ
KUBE_APISERVER_EXTRA_ARGS='$EXTRA'
ENV
    certificates
    echo "$TOKEN,admin,admin-uid,system:masters" > "$PKI/tokens.csv"
    start_etcd
    start_apiserver
    write_kubeconfig
    if [ -n "${KUBE_OWNER_PID:-}" ]; then
      (trap '' HUP; while kill -0 "$KUBE_OWNER_PID" 2>/dev/null; do sleep 1; done
       KUBE_RUN=$RUN "$0" down) </dev/null >/dev/null 2>&1 &
      echo $! > "$RUN/watchdog.pid"
    fi
    echo "ready: https://127.0.0.1:$API_PORT (etcd pid $(cat "$RUN/etcd.pid"), apiserver pid $(cat "$RUN/apiserver.pid"))"
    echo "export KUBECONFIG=$RUN/kubeconfig"
    ;;
  down)
    stop apiserver
    stop etcd
    if [ -f "$RUN/watchdog.pid" ]; then kill "$(cat "$RUN/watchdog.pid")" 2>/dev/null || true; rm -f "$RUN/watchdog.pid"; fi
    [ "${KUBE_WIPE:-0}" = 1 ] && rm -rf "$RUN/etcd-data" "$RUN/pki" "$RUN/kubeconfig" "$RUN/token"
    true
    ;;
  stop-apiserver) stop apiserver ;;
  start-apiserver) start_apiserver; echo "apiserver pid $(cat "$RUN/apiserver.pid")" ;;
  restart-apiserver) stop apiserver; start_apiserver; echo "apiserver pid $(cat "$RUN/apiserver.pid")" ;;
  compact)
    command -v etcdctl >/dev/null || { log "etcdctl missing (apt-get install etcd-client)"; exit 1; }
    export ETCDCTL_API=3
    rev=$(etcdctl --endpoints="http://127.0.0.1:$ETCD_PORT" endpoint status -w json \
          | grep -o '"revision":[0-9]*' | head -1 | cut -d: -f2)
    [ -n "$rev" ] || { log "cannot read etcd's revision"; exit 1; }
    etcdctl --endpoints="http://127.0.0.1:$ETCD_PORT" compact "$rev" --physical >&2
    echo "$rev"
    ;;
  status)
    for p in etcd apiserver; do
      if alive $p; then echo "$p running (pid $(cat "$RUN/$p.pid"))"; else echo "$p stopped"; fi
    done
    ;;
  *)
    sed -n '2,25p' "$0" >&2
    exit 2
    ;;
esac
