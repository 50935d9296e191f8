// The `storage:` section of the cluster YAML (docs/storage.md): the shared file systems that
// nodes mount and jobs see. Each is mounted at <category>/<name> on the nodes that get it, where
// the category is the parent directory of its kind (/mnt/datasets, /mnt/checkpoints); a
// `host_path` is a directory the site already provides, seen at its own path. A plain value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/types.h"

namespace lockstep::config {

struct FileSystem {
  enum class Kind : std::uint8_t {
    kNfs,       // mounted by the agent from `source` (server:/export) with `options`
    kBind,      // a host directory (`source`) bind-mounted by the agent at the mount point
    kHostPath,  // already there (the site's own mount, or `lockstep up --storage DIR`): checked
  };
  std::string name;      // letters, digits and . _ - ; unique
  std::string category;  // the parent directory, absolute ("/mnt/datasets"); "" for a host path
  Kind kind = Kind::kHostPath;
  std::string source;   // nfs: "server:/export"; bind: the host directory; host_path: the path
  std::string options;  // nfs mount options ("vers=4.2,hard"); "" : the defaults
  bool read_only = false;
  // Who gets it: the nodes of these partitions and these nodes; both empty: every node.
  std::vector<std::string> partitions;
  std::vector<std::string> nodes;
  // A check (stat) that has not answered after this long reads as hung.
  Seconds timeout = 10;

  bool operator==(const FileSystem&) const = default;

  // Where nodes and pods see it: <category>/<name>, or the host path itself.
  std::string MountPoint() const {
    return kind == Kind::kHostPath ? source : category + "/" + name;
  }
  // How reasons and listings name it: "datasets/imagenet", or the host path's own name.
  std::string DisplayName() const {
    if (kind == Kind::kHostPath) return name;
    const std::size_t slash = category.rfind('/');
    return category.substr(slash + 1) + "/" + name;
  }
};

const char* FileSystemKindName(FileSystem::Kind kind);  // "nfs", "bind", "host_path"

}  // namespace lockstep::config
