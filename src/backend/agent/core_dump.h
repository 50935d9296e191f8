// Core dumps of jobs' processes kept as evidence (docs/health.md, "Core dumps"). The tasks run
// with RLIMIT_CORE at the cluster's cap (health.core_dumps.max_size); when a task's main process
// dies of a core-dumping signal, the agent finds its core where the host's kernel.core_pattern
// put it, moves it into the job's own directory in the task's working directory
// (cores-<job>/core.<node>.<pid>) and reports where it is, or says why there is none to keep (a
// pattern that pipes cores to a handler such as systemd-coredump or apport). The working
// directory is the user's: the agent never acts on it itself, but runs a keeper process as the
// user (docs/security.md).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

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

// Where a core went when kernel.core_pattern pipes it to a program ("core dumped, piped to
// ..."); empty when the pattern writes a file.
std::string PipedCoreEvidence(const CorePattern& pattern);

// Finds the core, keeps it in the job's directory (cores-<job> in the working directory) and
// returns the evidence: "core dumped: PATH (N bytes)", or why no file is kept. Runs as the job's
// user (the keeper process below), never as root: every step goes through directory descriptors
// of the working directory without following a symbolic link in place of cores-<job>, and only a
// core file of the calling user is moved.
std::string KeepCoreDumpAsCaller(const CorePattern& pattern, const CoreDumpContext& context);

// The agent's side: runs `keeper` (the agent's own program; its `keep-core` mode runs
// KeepCoreDumpAsCaller) as the job's user in the working directory, for at most `timeout`, and
// returns the evidence it printed, or why there is none. A hung working directory costs the
// calling thread the timeout, nothing more.
std::string KeepCoreDump(const CorePattern& pattern, const CoreDumpContext& context,
                         const std::string& keeper, std::chrono::milliseconds timeout);

// `lockstep-agent keep-core PATTERN USES_PID JOB NODE PID SIGNAL HOSTNAME CWD`: the keeper's
// main (the arguments after `keep-core`); prints the evidence, returns the exit status.
int KeepCoreMain(const std::vector<std::string>& args);

}  // namespace lockstep::agent
