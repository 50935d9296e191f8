// The cluster's shared file systems on this host (docs/storage.md): the agent mounts what is
// declared for its nodes (bind mounts and NFS, when it runs as root), checks each one every
// health round, and unmounts what is no longer declared. Every look at a mount happens in a
// child process with a deadline: a dead NFS server or a FUSE daemon that never answers costs a
// check its timeout and reads as "did not answer", never a stuck agent thread.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace lockstep::agent {

// One declared file system as lockstepd sends it in the health settings.
struct StorageMount {
  std::string name;  // for reasons: "datasets/imagenet"
  std::string kind;  // "nfs", "bind" or "host_path"
  std::string source;
  std::string options;  // nfs mount options
  std::string path;     // the mount point (a host path: the path itself)
  bool read_only = false;
  std::chrono::seconds timeout{10};
  std::vector<std::string> nodes;  // the cluster's nodes that get it ...
  bool all_nodes = false;          // ... or every node
};

// `m` as seen where this host's `/` is at `root` (a container's view of its host): its mount
// point and a bind's source under `root`. "" leaves it as it is. Pure.
StorageMount UnderHostRoot(StorageMount m, const std::string& root);

// Whether `path` is a mount point in the text of /proc/self/mountinfo (its fifth field, with
// the kernel's octal escapes). Pure.
bool IsMountPoint(std::string_view mountinfo, const std::string& path);

// What is wrong with the file system on this host, or "" when it is healthy: it answers a stat
// within its timeout, is a directory, and (nfs, bind) something is mounted there.
std::string CheckStorage(const StorageMount& m);

// Mounts it (nfs, bind; a host path is the site's) at its path, made when missing, read-only
// when declared so; runs mount(8) with the file system's timeout. Root only.
Status MountStorage(const StorageMount& m);

// Unmounts what is mounted at `path` (lazily: processes that still hold files there keep them).
Status UnmountStorage(const std::string& path, std::chrono::seconds timeout);

}  // namespace lockstep::agent
