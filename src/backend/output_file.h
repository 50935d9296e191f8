// A job's output file as `lockstep logs` reads it on lockstepd's host. The path comes from the
// user (sbatch -o), so what is there is the user's choice: only a regular file that the job's
// user owns is read, never through a symbolic link, and nothing it can be replaced with (a FIFO
// without a writer, a device, a directory) blocks the reading thread or is opened for reading
// at all when that can be seen beforehand. lockstepd runs as root and the path is the user's:
// the path is looked at and opened by a child process with the job's user's credentials, so the
// answer says nothing of what lies beyond a directory that user may not search (present or
// not, through a symbolic link or not). Thread-safe (no state).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace lockstep::backend {

// At most the last 4 MiB of the file.
inline constexpr std::int64_t kMaxOutputBytes = 4 << 20;

// The file's last kMaxOutputBytes. NotFound when it is missing; PermissionDenied (with a message
// that says why) when it is a symbolic link, not a regular file, not owned by `uid`, or out of
// `uid`'s reach.
Result<std::string> ReadOwnOutput(const std::string& path, std::uint32_t uid);

}  // namespace lockstep::backend
