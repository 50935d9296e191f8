// A short program the agent runs for itself as a job's user, so that what it does on a path the
// user controls (the job's working directory, where a core dump lands) carries the user's
// rights and never root's: a planted symbolic link then leads only where the user could go
// anyway. The program is started through the launcher's ExecPlan (setgroups, setgid, setuid,
// chdir as the user), its output read up to a deadline, and it is killed when it overstays, so
// a hung file system holds up one call, never the agent. docs/security.md lists its uses.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep::agent {

struct UserCommand {
  std::vector<std::string> argv;  // argv[0] is an absolute path
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  std::string cwd = "/";  // changed into as the user
  std::chrono::milliseconds timeout{10000};
  std::size_t max_output = 64 * 1024;  // stdout and stderr together; the rest is drained
  int stdin_fd = -1;  // its standard input (the caller's, kept open by it); -1: /dev/null
};

// Runs the command and returns what it printed when it exited 0. Unavailable when it ran
// past the timeout (it is killed with its process group); the launcher's error when it could
// not start (no such directory, no permission); FailedPrecondition with its first output line
// when it failed. A root agent always switches to the user; another runs it as itself.
// Thread-safe; blocks the calling thread for up to the timeout.
Result<std::string> RunAsUser(const UserCommand& command);

}  // namespace lockstep::agent
