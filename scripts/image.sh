#!/bin/bash
# lockstep's container image without a registry or a container daemon: a docker-archive tarball
# (what `docker save` writes) made from this build's lockstepd and lockstep, the shared libraries
# they load (as ldd finds them on this Debian host) and a few files, so that
# `ctr -n k8s.io images import FILE` (or `docker load -i FILE`, or scripts/kube-node.sh import)
# loads it. It has the contents of deploy/docker/Dockerfile's image: the same two binaries in
# /usr/local/bin, the user lockstep (10001:10001) owning /var/lib/lockstep, /etc/lockstep, CA
# certificates, the same entrypoint, command, user and port; its shell is busybox-static's
# /bin/sh (Debian's dash in the Dockerfile's), for jobs that name it with --container-image.
#
#   scripts/image.sh            # builds lockstepd and lockstep in ./build if needed
#   BUILD_DIR=... IMAGE_REF=... IMAGE_OUT=... scripts/image.sh
#
# Prints the tarball's path on its last line (default build/image/lockstepd-<version>.tar, image
# docker.io/lockstep/lockstepd:<version>, the name deploy/kubernetes uses).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
B=${BUILD_DIR:-$root/build}
version=$(sed -n 's/^project(lockstep VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
REF=${IMAGE_REF:-docker.io/lockstep/lockstepd:$version}
OUT=${IMAGE_OUT:-$B/image/lockstepd-$version.tar}
log() { echo "image.sh: $*" >&2; }

[ -f "$B/build.ninja" ] || { log "no build in $B: run scripts/build.sh first"; exit 1; }
cmake --build "$B" --target lockstepd lockstep lockstep-agent >&2
for tool in ldd strip python3; do
  command -v $tool >/dev/null || { log "$tool is missing (apt-get install binutils python3)"; exit 1; }
done
[ -x /bin/busybox ] || { log "/bin/busybox is missing (apt-get install busybox-static)"; exit 1; }
[ -f /etc/ssl/certs/ca-certificates.crt ] || { log "no CA certificates (apt-get install ca-certificates)"; exit 1; }

rootfs=$(mktemp -d "${TMPDIR:-/tmp}/lockstep-image.XXXXXX")
trap 'rm -rf "$rootfs"' EXIT
mkdir -p "$rootfs"/{usr/local/bin,bin,etc/lockstep,etc/ssl/certs,var/lib/lockstep,tmp,root,proc,sys,dev}
chmod 1777 "$rootfs/tmp"
for b in lockstepd lockstep lockstep-agent; do
  strip -o "$rootfs/usr/local/bin/$b" "$B/bin/$b"
done
# The user's own sshd of a login pod (login.ssh, docs/login.md), when this host has one.
sshd=()
if [ -x /usr/sbin/sshd ]; then
  mkdir -p "$rootfs/usr/sbin"
  cp /usr/sbin/sshd "$rootfs/usr/sbin/sshd"
  sshd=(/usr/sbin/sshd)
else
  log "no /usr/sbin/sshd (apt-get install openssh-server): login pods of this image run no sshd"
fi
# Every library the binaries load, at the path the dynamic loader looks for it (the loader too).
for lib in $(ldd "$B/bin/lockstepd" "$B/bin/lockstep" "$B/bin/lockstep-agent" "${sshd[@]}" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && $2 ~ /^\(/ {print $1}' | sort -u); do
  mkdir -p "$rootfs$(dirname "$lib")"
  cp -L "$lib" "$rootfs$lib"
done
cp /bin/busybox "$rootfs/bin/busybox"
# Every applet busybox has (a login pod's shell tools; mount and umount for the storage
# DaemonSet's agent, deploy/kubernetes/storage-agent.yaml).
for app in $(/bin/busybox --list); do
  [ -e "$rootfs/bin/$app" ] || ln -s busybox "$rootfs/bin/$app"
done
# The Slurm commands and `lockstep login`, as links to lockstep (lockstep install-aliases).
for cmd in sbatch srun salloc squeue scancel sinfo scontrol sacct sprio sacctmgr sshare sstat sattach sreport sdiag; do
  ln -s lockstep "$rootfs/usr/local/bin/$cmd"
done
cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/"
printf 'root:x:0:0:root:/root:/bin/sh\nlockstep:x:10001:10001::/var/lib/lockstep:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$rootfs/etc/passwd"
printf 'root:x:0:\nlockstep:x:10001:\nnogroup:x:65534:\n' > "$rootfs/etc/group"
printf 'hosts: files dns\npasswd: files\ngroup: files\n' > "$rootfs/etc/nsswitch.conf"

mkdir -p "$(dirname "$OUT")"
python3 "$root/scripts/docker_archive.py" "$rootfs" "$REF" "$OUT" \
  --entrypoint '["/usr/local/bin/lockstepd"]' \
  --cmd '["--config", "/etc/lockstep/cluster.yaml", "--state-dir", "/var/lib/lockstep"]' \
  --user 10001:10001 --expose 6820/tcp --owner var/lib/lockstep=10001:10001 >&2
log "$REF: $(du -h "$OUT" | cut -f1)"
echo "$OUT"
