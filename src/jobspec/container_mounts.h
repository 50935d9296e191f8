// sbatch --container-mounts (the pyxis plugin's syntax, which NVIDIA's Slurm users know):
// host directories bound into a job's containers, "SRC[:DST[:FLAGS]][,SRC:DST...]", where FLAGS
// is "ro" or "rw" and DST defaults to SRC. Only directories on a declared file system are
// accepted; the controller checks that at submission (docs/storage.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace lockstep::jobspec {

struct ContainerMount {
  std::string source;  // absolute, normalized, on the host
  std::string target;  // absolute, normalized, in the container
  bool read_only = false;
  bool operator==(const ContainerMount&) const = default;
};

// At most this many mounts a job.
inline constexpr std::size_t kMaxContainerMounts = 64;

// The mounts of `text` ("" : none), or an error naming the entry and what is wrong with it
// (for the caller to prefix with the option's name).
Result<std::vector<ContainerMount>> ParseContainerMounts(std::string_view text);

// Whether `path` is `dir` or lies below it (both absolute and normalized).
bool PathWithin(std::string_view path, std::string_view dir);

}  // namespace lockstep::jobspec
