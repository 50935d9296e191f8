// What a task's child process does between fork and exec, prepared in the parent: after fork, a
// child of a multi-threaded process may only make async-signal-safe calls, so every string,
// array and path it needs is built here beforehand, and the child only makes system calls.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/agent/launcher.h"
#include "common/status.h"

namespace lockstep::agent::internal {

// Where the child failed; sent to the parent with errno through the CLOEXEC error pipe.
enum class ChildStage : int {
  kSetsid = 1,
  kCgroup,
  kSetgroups,
  kSetgid,
  kSetuid,
  kChdir,
  kStdin,
  kStdout,
  kStderr,
  kTerminal,
  kExec,
};

// The message the child writes to the error pipe when it cannot exec (one write, 8 bytes).
struct ChildError {
  int stage = 0;
  int error = 0;
};

// The cgroup.procs files the child writes "0" to, to join those cgroups before it runs anything:
// its v2 cgroup's, and on a hybrid host its v1 cpu, cpuset and memory cgroups'. -1: none.
struct CgroupJoin {
  std::array<int, 4> procs_fds{-1, -1, -1, -1};
};

// The prepared exec of one task. Not copyable or movable: the pointer arrays point into the
// strings it owns. Const methods are safe to call from the forked child.
class ExecPlan {
 public:
  // switch_user: the child calls setgroups/setgid/setuid (the launcher is root).
  static Result<std::unique_ptr<ExecPlan>> Build(const TaskSpec& spec, bool switch_user);
  ExecPlan(const ExecPlan&) = delete;
  ExecPlan& operator=(const ExecPlan&) = delete;

  // Runs in the forked child: resets signals, starts a session, joins the cgroups (`join`),
  // drops privileges, changes directory, opens stdin/stdout/stderr, execs. Never returns: on
  // failure it writes a ChildError to error_fd and _exits 127.
  [[noreturn]] void RunChild(int error_fd, const CgroupJoin& join) const;

  // Forks with every signal blocked around the fork (no handler of the agent runs in the child),
  // and the child runs RunChild. The child's pid, or -1 with errno set.
  pid_t Fork(int error_fd, const CgroupJoin& join = {}) const;

  // The Status for a ChildError the child reported.
  Status Describe(const ChildError& e) const;

  // In the parent, after fork: reads the child's reports from the error pipe's read end until
  // it executes the program (Ok: the pipe closed), fails (its Status; the child is reaped), or
  // `give_up` returns true or `deadline` passes (Unavailable, naming what the child was still
  // doing, say opening its output file; the child's session is killed and the child reaped).
  // `give_up` is asked every few milliseconds while the child has not executed.
  Status AwaitExec(pid_t pid, int error_read_fd, const std::function<bool()>& give_up,
                   std::chrono::steady_clock::time_point deadline) const;

 private:
  ExecPlan() = default;

  std::vector<std::string> argv_strings_;
  std::vector<std::string> env_strings_;
  std::vector<std::string> candidates_;  // the paths to try execve on, in order
  std::vector<char*> argv_;              // null-terminated
  std::vector<char*> envp_;              // null-terminated
  std::string search_path_;              // the PATH searched, for messages; empty: no search
  std::string cwd_, stdin_path_, stdout_path_, stderr_path_;
  bool share_stderr_ = true;
  int stdout_fd_ = -1, stderr_fd_ = -1;  // the caller's descriptors, used instead of the paths
  int stdin_fd_ = -1;
  int inherit_fd_ = -1;
  bool controlling_tty_ = false;
  bool append_ = false;
  bool switch_user_ = false;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  std::vector<gid_t> groups_;
  bool set_core_limit_ = false;  // core_limit_ is the task's RLIMIT_CORE (soft and hard)
  rlimit core_limit_{};
  int max_fd_ = 1024;  // fallback upper bound to mark CLOEXEC when close_range is missing
};

}  // namespace lockstep::agent::internal
