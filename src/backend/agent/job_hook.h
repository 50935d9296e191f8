// A job's Prolog or Epilog program (Slurm's Prolog and Epilog, docs/health.md), as lockstep-agent
// runs it on one node: as the agent's own user (root on a real cluster), with the job's SLURM_*
// variables as its whole environment, stdin from /dev/null, in a process group of its own that a
// timeout kills whole. Its output is kept only for the failure's detail.
#pragma once

#include <chrono>
#include <map>
#include <string>

namespace lockstep::agent {

struct JobHookRun {
  std::string program;  // absolute
  std::chrono::seconds timeout{300};
  std::map<std::string, std::string> env;  // the complete environment
};

struct JobHookOutcome {
  bool ok = false;
  // When it failed: "exit 1", "killed by signal 9", "timed out after 5 s", or why it could not
  // start; then ": " and the first line of its output, when it wrote one.
  std::string detail;
};

// Blocks until the program ends or its timeout passes. Callable from any thread; it waits only
// for its own child.
JobHookOutcome RunJobHook(const JobHookRun& hook);

}  // namespace lockstep::agent
