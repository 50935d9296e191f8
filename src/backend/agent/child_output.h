// Reading what a program the agent runs for itself prints (the site's health program, a job's
// Prolog or Epilog): its output up to a deadline, and the first line as the reason it gives.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace lockstep::agent {

// Reads `fd` into `out` (keeping at most `max_bytes`, draining the rest) until the pipe closes
// (true) or `deadline` passes (false).
bool ReadChildOutput(int fd, std::string& out, std::chrono::steady_clock::time_point deadline,
                     std::size_t max_bytes);

// The output's first line without trailing blanks, at most 200 characters.
std::string FirstLineOf(const std::string& out);

}  // namespace lockstep::agent
