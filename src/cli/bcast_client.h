// The sending side of sbcast and srun --bcast: a file read as the calling user (the CLI runs as
// them) and sent to lockstepd piece by piece (POST /api/v1/jobs/{id}/bcast, docs/api.md
// "Broadcast"), each piece once every node of the job wrote the one before, so memory holds one
// piece whatever the file's size. Files of at most kMaxBroadcastFile bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "client/api_client.h"
#include "common/status.h"

namespace lockstep::cli {

inline constexpr std::uint64_t kMaxBroadcastFile = 1ull << 30;  // 1 GiB
// Pieces are at most this large (lockstepd's limit); sbcast -s asks for smaller ones, down to
// kMinBroadcastPiece (Slurm rounds the block size off likewise).
inline constexpr std::size_t kMaxBroadcastPiece = 2u << 20;
inline constexpr std::size_t kMinBroadcastPiece = 64u << 10;

struct BroadcastFileRequest {
  std::string source;  // as the user named it
  std::string dest;    // absolute
  unsigned long long job = 0;
  int step = -1;                           // -1: every node of the job
  bool force = false;                      // replace a file that exists
  bool preserve = false;                   // the source's access and modification times too
  std::size_t piece = kMaxBroadcastPiece;  // clamped to [kMinBroadcastPiece, kMaxBroadcastPiece]
  int timeout_s = 0;                       // per piece; 0: lockstepd's default (10 s)
};

// Copies the file. Each node that failed is printed as Slurm's sbcast prints it,
// "<command>: error: REQUEST_FILE_BCAST(<node>): <why>", and the copy stops there
// (FailedPrecondition, already printed: the caller exits 1 without another line). Other
// failures (the source cannot be read, the job is not running, another user's job) come back
// unprinted.
Status SendFileToJob(client::ApiClient& api, const BroadcastFileRequest& request,
                     const std::string& command);

// The text of a Status SendFileToJob returned after printing its node lines.
inline constexpr const char* kNodesFailed = "the copy failed on some of the job's nodes";
// Whether `status` is that one: the caller exits 1 and prints nothing more.
inline bool NodesFailed(const Status& status) {
  return status.message() == kNodesFailed;
}

}  // namespace lockstep::cli
