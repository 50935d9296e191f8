// The writer of sbcast's pieces on a node: `lockstep-agent bcast-write`, which the agent runs as
// the job's user (run_as_user.h) with the piece on its standard input, so the file is created
// and written with the user's rights alone. It never follows a link at the file's name
// (O_NOFOLLOW) and writes only into a regular file; the directories on the way are the user's
// to reach, as for any program of theirs.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep::agent {

struct BroadcastPiece {
  std::string path;          // absolute
  std::uint64_t offset = 0;  // 0: the first piece, which creates the file (0700)
  bool force = false;        // the first piece replaces (truncates) a file that exists
  bool last = false;         // sets the permission bits, and the times when mtime != 0
  mode_t mode = 0700;
  std::int64_t atime = 0, mtime = 0;
};

// Writes `data` at the piece's offset as the calling process's user. The error, when any, is
// strerror's words for what failed ("File exists", "Permission denied", "Too many levels of
// symbolic links"), or "Not a regular file".
Status WriteBroadcastPiece(const BroadcastPiece& piece, const std::string& data);

// The piece's command line after `lockstep-agent bcast-write`, and back.
std::vector<std::string> BroadcastPieceArgs(const BroadcastPiece& piece);
Result<BroadcastPiece> ParseBroadcastPieceArgs(const std::vector<std::string>& args);

// `lockstep-agent bcast-write PATH OFFSET FORCE LAST MODE ATIME MTIME`, the piece's bytes on
// stdin (at most kMaxBroadcastPiece): prints "ok", or "error: WHY", and exits 0; 2 for bad
// arguments.
int BroadcastWriteMain(const std::vector<std::string>& args);

// The most bytes one piece carries (lockstepd refuses larger ones).
inline constexpr std::size_t kMaxBroadcastPiece = 2u << 20;

}  // namespace lockstep::agent
