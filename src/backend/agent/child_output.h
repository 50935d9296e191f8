// Reading what a program the agent runs for itself prints (the site's health program, a job's
// Prolog or Epilog): its output up to a deadline, and the first line as the reason it gives.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>

namespace lockstep::agent {

// Reads `fd` into `out` (keeping at most `max_bytes`, draining the rest) until the pipe closes
// (true) or `deadline` passes (false).
bool ReadChildOutput(int fd, std::string& out, std::chrono::steady_clock::time_point deadline,
                     std::size_t max_bytes);

// How a wait for a child of the agent's own ended.
enum class ChildWait { kExited, kTimedOut, kLost };
// Waits for child `pid` to exit until `deadline`, looking every few milliseconds (the agent's
// reaper owns SIGCHLD, so there is no signal to wait on). kExited with its wait status in
// `status`; kTimedOut when the deadline passed first (the child is left as it is); kLost when it
// cannot be waited for.
ChildWait WaitChildUntil(pid_t pid, std::chrono::steady_clock::time_point deadline, int& status);

// The output's first line without trailing blanks, at most 200 characters.
std::string FirstLineOf(const std::string& out);

}  // namespace lockstep::agent
