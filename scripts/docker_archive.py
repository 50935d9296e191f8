#!/usr/bin/env python3
"""Writes a container image as a docker-archive tarball (the layout of `docker save`: manifest.json,
the config JSON, one layer tar) from a root file system directory, with no registry and no daemon.
`ctr -n k8s.io images import FILE` and `docker load -i FILE` both read it.

usage: docker_archive.py ROOTFS REPO:TAG OUT.tar [--entrypoint JSON] [--cmd JSON]
                         [--env NAME=VALUE]... [--workdir DIR] [--user USER]
                         [--owner PATH=UID:GID]... [--expose PORT/tcp]...

The layer is reproducible: entries sorted, owned by root (but for the --owner paths), mtime 0, so the same tree gives the same
image id. Prints "OUT REPO:TAG sha256:<config digest>".
"""
import argparse
import hashlib
import io
import json
import os
import sys
import tarfile

DEFAULT_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def layer_tar(rootfs, owners):
    """The root file system as an uncompressed tar, in a stable order; `owners` maps paths
    relative to it to (uid, gid)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for top, dirs, files in os.walk(rootfs):
            dirs.sort()
            for name in sorted(dirs + files):
                path = os.path.join(top, name)
                info = tar.gettarinfo(path, arcname=os.path.relpath(path, rootfs))
                info.uid, info.gid = owners.get(info.name, (0, 0))
                info.uname = info.gname = "root" if info.uid == 0 else ""
                info.mtime = 0
                if info.isfile():
                    with open(path, "rb") as f:
                        tar.addfile(info, f)
                else:
                    tar.addfile(info)
    return buf.getvalue()


def json_arg(text, flag):
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        sys.exit(f"docker_archive.py: {flag}: not JSON ({e}): {text}")
    if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        sys.exit(f"docker_archive.py: {flag}: want a JSON array of strings or null: {text}")
    return value


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rootfs")
    ap.add_argument("ref", help="REPO:TAG, e.g. local/lockstep:0.1")
    ap.add_argument("out")
    ap.add_argument("--entrypoint", default="null")
    ap.add_argument("--cmd", default="null")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--workdir", default="/")
    ap.add_argument("--user", default="")
    ap.add_argument("--owner", action="append", default=[])
    ap.add_argument("--expose", action="append", default=[])
    a = ap.parse_args()
    if not os.path.isdir(a.rootfs):
        sys.exit(f"docker_archive.py: {a.rootfs}: not a directory")
    if ":" not in a.ref.rsplit("/", 1)[-1]:
        sys.exit(f"docker_archive.py: {a.ref}: want REPO:TAG")
    for e in a.env:
        if "=" not in e:
            sys.exit(f"docker_archive.py: --env {e}: want NAME=VALUE")
    owners = {}
    for o in a.owner:
        path, _, ids = o.partition("=")
        uid, _, gid = ids.partition(":")
        if not path or not uid.isdigit() or not gid.isdigit():
            sys.exit(f"docker_archive.py: --owner {o}: want PATH=UID:GID")
        owners[path.strip("/")] = (int(uid), int(gid))
    entrypoint = json_arg(a.entrypoint, "--entrypoint")
    cmd = json_arg(a.cmd, "--cmd")

    layer = layer_tar(a.rootfs, owners)
    layer_digest = hashlib.sha256(layer).hexdigest()
    env = a.env if any(e.startswith("PATH=") for e in a.env) else [DEFAULT_PATH] + a.env
    config = {
        "architecture": "amd64",
        "os": "linux",
        "created": "1970-01-01T00:00:00Z",
        "config": {"Env": env, "Entrypoint": entrypoint, "Cmd": cmd, "WorkingDir": a.workdir,
                   "User": a.user, "ExposedPorts": {p: {} for p in a.expose}},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + layer_digest]},
        "history": [{"created": "1970-01-01T00:00:00Z", "created_by": "scripts/docker_archive.py"}],
    }
    config_bytes = json.dumps(config, sort_keys=True).encode()
    config_digest = hashlib.sha256(config_bytes).hexdigest()
    manifest = [{"Config": config_digest + ".json", "RepoTags": [a.ref],
                 "Layers": [layer_digest + "/layer.tar"]}]

    tmp = a.out + ".part"
    with tarfile.open(tmp, "w") as out:
        def add(name, data):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            out.addfile(info, io.BytesIO(data))
        add(config_digest + ".json", config_bytes)
        add(layer_digest + "/layer.tar", layer)
        add("manifest.json", json.dumps(manifest).encode())
    os.replace(tmp, a.out)  # never a half-written archive under the final name
    print(a.out, a.ref, "sha256:" + config_digest)


if __name__ == "__main__":
    main()
