// Reading a job's output file for `lockstep logs`, on the host that has it, as lockstepd (root):
// only a regular file that the job's user owns, never through a symbolic link, and never
// blocking (a FIFO or a device in its place is refused, not opened for reading).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace lockstep::agent {

// The last `max_bytes` of `path`. NotFound when it cannot be opened; PermissionDenied when it
// is not a regular file of `uid` (a FIFO, a device, a directory, a link, another's file).
Result<std::string> ReadOwnOutput(const std::string& path, std::uint32_t uid,
                                  std::size_t max_bytes = 4 << 20);

}  // namespace lockstep::agent
