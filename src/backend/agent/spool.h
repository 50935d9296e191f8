// The agent's spool: the batch scripts of the runs it launches, each in a directory of its own
// named for the job, the run (the job's restart count) and the node:
//   <spool>/job<id>.run<run>.<node>/script
// A run's directory belongs to that run alone, so the cleanup of a requeued job's previous run
// never removes the script of its next one, whatever the order in which they happen (issue 17:
// "cannot run .../job526/script: No such file or directory"). The directory is the agent's, 0711
// (the user reaches the script by name, lists nothing and creates nothing there), and the
// script 0700, owned by the job's user when the agent is root (docs/security.md). Thread-safe: each call
// touches only the directory of its own run.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace lockstep::agent {

struct SpoolRun {
  std::uint64_t job = 0;
  int run = 0;
  std::string node;  // the node the run's batch script runs on (an agent may serve several)
};

class Spool {
 public:
  // `dir` is created (0711: users pass through to their own run directories) when missing.
  static Result<Spool> Open(std::string dir);

  // The directory of a run's files.
  std::string RunDir(const SpoolRun& run) const;
  // Writes the run's script (an earlier directory of the very same run, left by an agent that
  // died, is replaced) and gives it to uid:gid; returns the script's path. Nothing is left
  // behind on error.
  Result<std::string> WriteScript(const SpoolRun& run, std::string_view text, uid_t uid,
                                  gid_t gid) const;
  // Removes the run's directory and everything in it; a missing one is fine.
  void RemoveRun(const SpoolRun& run) const;

  const std::string& dir() const { return dir_; }

 private:
  explicit Spool(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

}  // namespace lockstep::agent
