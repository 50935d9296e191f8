// The agent's process launcher: starts a job's batch script and its step tasks as the submitting
// user, in a session and process group of their own and, where the host allows it, in a cgroup v2
// with memory and CPU limits; signals them; and reaps them so that nothing of a finished task is
// left running. docs/agent-processes.md describes the whole life of a task.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backend/agent/task_usage.h"
#include "common/status.h"

namespace lockstep::agent {

class CgroupTree;

// What to run and how. The launcher copies what it needs; the caller keeps ownership.
struct TaskSpec {
  // argv[0] is the program: a path (absolute, or relative to cwd) when it contains '/', otherwise
  // searched in the PATH of `env` (or /usr/local/bin:/usr/bin:/bin when env has no PATH).
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // the complete environment: nothing is inherited
  std::string cwd;                         // must exist and be reachable by the user
  // The user to run as. A root launcher always switches to uid/gid/groups (setgroups, setgid,
  // setuid); a non-root launcher runs tasks only as its own uid and gid (PermissionDenied
  // otherwise), and they keep its supplementary groups.
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  // Output files, opened by the task after it dropped its privileges, so they are created with
  // the user's ownership (mode 0644 less the umask) and only where the user may write. Relative
  // paths are relative to cwd. Empty stdout_path: /dev/null. Empty stderr_path (or the same path
  // as stdout): stderr shares stdout's open file.
  std::string stdout_path;
  std::string stderr_path;
  bool append = false;  // append to the output files instead of truncating them
  // Open descriptors (a pipe's write end, say) the task gets as its stdout or stderr instead of
  // the paths above; -1: use the path. The launcher duplicates them into the child only; the
  // caller keeps ownership and closes its copies after Spawn (else a reader never sees EOF).
  int stdout_fd = -1;
  int stderr_fd = -1;
  std::string stdin_path = "/dev/null";  // opened as the user; empty: /dev/null
  // An open descriptor (a pipe's read end, a pseudo-terminal's slave) the task gets as its
  // stdin instead of stdin_path; -1: the path. Owned by the caller, as stdout_fd.
  int stdin_fd = -1;
  // stdin_fd is a terminal: it becomes the task's controlling terminal (TIOCSCTTY in its new
  // session), so the terminal's ^C, ^Z and size changes signal the task's foreground group.
  bool controlling_tty = false;
  // A descriptor the task inherits under its own number (its close-on-exec flag cleared in the
  // task only): the PMI-2 server's end for PMI_FD (pmi2_server.h). Owned by the caller, as
  // stdout_fd; -1: none. Every other descriptor of the agent is closed in the task.
  int inherit_fd = -1;
  // Confinement in a cgroup v2, where the launcher has one (Launcher::cgroups_enabled). A limit
  // needs a cgroup_name; a limit whose controller the host does not give is ignored.
  // e.g. "job_42/step_batch", below the launcher's root; unique among running tasks (else
  // AlreadyExists); empty: none.
  std::string cgroup_name;
  std::int64_t memory_limit_mb = 0;  // memory.max, with memory.swap.max = 0; 0: no limit
  std::vector<int> cpus;             // cpuset.cpus; empty: the CPUs of the parent cgroup
  // The CPU time it may use, in CPUs (the cpu controller's quota: cpu.max, or v1's CFS quota):
  // -c1 uses at most one CPU's worth however many threads it runs. 0: no limit.
  std::int32_t cpu_limit = 0;
  // RLIMIT_CORE of the task (soft and hard), in bytes, never above the launcher's own hard
  // limit: the most of a core the kernel writes. -1: inherited from the launcher.
  std::int64_t core_limit_bytes = -1;
};

// How a task's main process ended.
struct TaskExit {
  int exit_code = 0;        // its exit status when it exited; 0 when a signal ended it;
                            // -1 when the status was lost (someone else reaped the process)
  int signal = 0;           // the signal that ended it, 0 when it exited
  bool oom_killed = false;  // the kernel's OOM killer killed a process of the task's cgroup
  bool core_dumped = false;
};

// Starts and tracks tasks. Thread-safe: every method may be called from any thread. The caller
// owns the Launcher; tasks still running when it is destroyed keep running, untracked (they are
// neither signalled nor reaped), and their cgroups stay.
//
// The launcher waits only for the pids it started (waitpid on each, never on -1), so other code of
// the process may start and reap children of its own; it must not ignore SIGCHLD (Create checks)
// nor reap the launcher's children.
class Launcher {
 public:
  struct Options {
    // Where task cgroups go (a cgroup v2 directory, created when missing). Empty: autodetect a
    // place (see docs/agent-processes.md), or run without cgroups when there is none. A root
    // given here that cannot be used is an error of Create.
    std::string cgroup_root;
    // Where the launcher reports what it found and what went wrong outside a call (cgroups off
    // and why, processes that outlived SIGKILL). Called from any thread that calls the launcher.
    // Empty: one line on stderr.
    std::function<void(const std::string&)> log;
  };

  static Result<std::unique_ptr<Launcher>> Create(const Options& options);
  ~Launcher();
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  // True when tasks with a cgroup_name run in a cgroup of their own (tracked, killed as a whole).
  bool cgroups_enabled() const;
  // True when memory_limit_mb and cpus are applied (the memory / cpuset controllers are enabled).
  bool memory_limits_enabled() const;
  bool cpu_binding_enabled() const;
  // True when a task's cpu_limit holds (the cpu controller, v2 or v1).
  bool cpu_limits_enabled() const;
  // The directory below which task cgroups are created; empty without cgroups.
  std::string cgroup_root() const;
  // One line: where the task cgroups go and which controllers are on, or why cgroups are off.
  const std::string& cgroup_note() const { return cgroup_note_; }

  // Starts the task in a new session and process group (its pid is the group id) and, when it has
  // a cgroup_name and cgroups are enabled, in that cgroup. Returns its pid once the program has
  // been executed. Anything that keeps it from running (a missing program or working directory,
  // no permission, a bad output path) is an error here; no process is left behind then.
  // The child changes directory and opens the output files as the user before it executes, and
  // Spawn waits for that: a FIFO without a reader or a file system that does not answer holds
  // the calling thread (only), until `give_up` (asked every few milliseconds) returns true; the
  // child is then killed and the error (Unavailable) says what it was still waiting on.
  Result<pid_t> Spawn(const TaskSpec& spec, const std::function<bool()>& give_up = {});

  // Sends signo to the task's process group and, with a cgroup, to every process in it.
  // NotFound when pid is not a task of this launcher (or has been reaped).
  Status Signal(pid_t pid, int signo);
  // Sends signo to the task's own process only (scancel --batch: the batch script's shell).
  Status SignalLeader(pid_t pid, int signo);

  // scontrol suspend/resume (launcher_suspend.cc): stops every process of the task where it is,
  // or lets it go on. With a cgroup, through the cgroup v2 freezer (cgroup.freeze: the tasks
  // cannot tell and no signal is sent); without one (or where the freezer cannot be written),
  // SIGSTOP / SIGCONT to its process group and cgroup. NotFound for an unknown pid.
  Status Suspend(pid_t pid, bool stop);
  // What the task's processes used so far (launcher_usage.cc, task_usage.h): its cgroup's
  // accounting where it has one, /proc for the rest. NotFound for an unknown pid.
  Result<TaskUsageSample> Usage(pid_t pid);
  // SIGCONT and SIGTERM to every process of the task, then SIGKILL after `grace` if any is left.
  // A suspended task is resumed first.
  // Blocks for up to `grace` (to stop many tasks at once, call it from one thread per task). The
  // task is still reported by Reap or Wait afterwards.
  Status Terminate(pid_t pid, std::chrono::milliseconds grace);

  // Non-blocking: the tasks whose main process has exited, once nothing of them is left: the rest
  // of the process group is killed, the cgroup is killed, emptied and removed. A task whose
  // cgroup is still emptying is reported by a later call. Tasks a Wait is waiting for are not.
  std::vector<std::pair<pid_t, TaskExit>> Reap();

  // Blocks until the task has ended and is cleaned up as in Reap, and returns how it ended.
  Result<TaskExit> Wait(pid_t pid);

 private:
  // A started task, from Spawn until Reap or Wait reports it.
  struct Task {
    std::string cgroup_name;  // empty: none
    std::string cgroup_path;
    std::int64_t oom_kills_at_start = 0;
    bool waited = false;        // a Wait owns the task; Reap leaves it alone
    bool exited = false;        // the main process has ended (a zombie until Finish reaps it)
    bool status_lost = false;   // someone else reaped the main process
    bool group_killed = false;  // the rest of the process group has been sent SIGKILL
    TaskExit exit;
    std::chrono::steady_clock::time_point exited_at;
    bool frozen = false;  // its cgroup is frozen (Suspend): thawed before it is terminated
  };
  Launcher(Options options, std::unique_ptr<CgroupTree> cgroups, std::string note);

  void Log(const std::string& line) const;
  // Notes the main process's end in `t` without reaping it. Requires mu_.
  bool PollExit(pid_t pid, Task& t, bool block);
  // Kills what is left of an ended task; true once nothing is left. Requires mu_.
  bool KillLeftovers(pid_t pid, Task& t);
  // Reaps the main process, reads the OOM count, removes the cgroup. Requires mu_.
  TaskExit Finish(pid_t pid, Task& t);
  bool AnythingLeft(pid_t pid);

  const Options options_;
  const std::unique_ptr<CgroupTree> cgroups_;  // null: no cgroups
  const std::string cgroup_note_;
  const bool root_;  // the launcher runs as root and switches users

  mutable std::mutex mu_;
  std::map<pid_t, Task> tasks_;           // guarded by mu_
  std::set<std::string> cgroups_in_use_;  // guarded by mu_; cgroup names of live tasks
};

}  // namespace lockstep::agent
