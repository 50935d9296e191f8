// Core dumps of jobs' processes kept as evidence (docs/health.md, "Core dumps"). The tasks run
// with RLIMIT_CORE at the cluster's cap (health.core_dumps.max_size); when a task's main process
// dies of a core-dumping signal, the agent finds its core where the host's kernel.core_pattern
// put it, moves it into the job's own directory in the task's working directory
// (cores-<job>/core.<node>.<pid>) and reports where it is, or says why there is none to keep (a
// pattern that pipes cores to a handler such as systemd-coredump or apport).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace lockstep::agent {

struct CoreDumpContext {
  std::uint64_t job = 0;
  std::string node;
  pid_t pid = 0;  // the task's main process, which dumped
  int signal = 0;
  std::string cwd;  // the task's working directory, where a relative pattern writes
  uid_t uid = 0;
  gid_t gid = 0;
  std::string hostname;  // %h
};

// The host's kernel settings that say where a core goes.
struct CorePattern {
  std::string pattern = "core";  // /proc/sys/kernel/core_pattern, without its newline
  bool uses_pid = false;         // /proc/sys/kernel/core_uses_pid
  static CorePattern OfHost();
};

// Where the kernel wrote the core, as a glob(3) pattern: the specifiers the agent knows (%p,
// %P, %i, %I, %u, %g, %s, %h, %%) expanded, the others (%e, %t, %E, ...) as '*'. Empty when the
// pattern pipes to a program.
std::string CoreGlob(const CorePattern& pattern, const CoreDumpContext& context);

// Finds the core, keeps it in the job's directory and returns the evidence: "core dumped:
// PATH (N bytes)", or why no file is kept. Runs as the agent (root on a real cluster): the
// directory is made for the job's user.
std::string KeepCoreDump(const CorePattern& pattern, const CoreDumpContext& context);

}  // namespace lockstep::agent
