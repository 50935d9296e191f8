#include "backend/agent/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <thread>

#include "backend/agent/cgroup.h"
#include "backend/agent/exec_plan.h"

namespace lockstep::agent {
namespace {

using Clock = std::chrono::steady_clock;
using internal::ErrnoText;

// How long the launcher keeps killing the processes of a cgroup after the main process ended
// before it reports the task anyway (processes in uninterruptible sleep can outlive SIGKILL).
constexpr auto kCleanupPatience = std::chrono::seconds(10);
constexpr auto kWaitPoll = std::chrono::milliseconds(5);

// The state of a task's main process, peeked at with WNOWAIT: an exited process stays a zombie,
// so its pid, which is also its process group id, cannot be reused until Finish reaps it.
struct Peek {
  enum State { kRunning, kExited, kLost } state = kRunning;
  TaskExit exit;
};

Peek PeekExit(pid_t pid, bool block) {
  Peek p;
  siginfo_t si{};
  const int options = WEXITED | WNOWAIT | (block ? 0 : WNOHANG);
  int rc;
  do {
    rc = waitid(P_PID, static_cast<id_t>(pid), &si, options);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {  // ECHILD: someone else reaped it
    p.state = Peek::kLost;
    p.exit.exit_code = -1;
    return p;
  }
  if (si.si_pid == 0) return p;  // still running (WNOHANG)
  p.state = Peek::kExited;
  if (si.si_code == CLD_EXITED) {
    p.exit.exit_code = si.si_status;
  } else {
    p.exit.signal = si.si_status;
    p.exit.core_dumped = si.si_code == CLD_DUMPED;
  }
  return p;
}

// Whether a process other than a zombie is in process group pgid (scans /proc).
bool GroupHasLiveMembers(pid_t pgid) {
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() ||
        !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    auto stat = internal::ReadSmallFile(it->path().string() + "/stat");
    if (!stat.ok()) continue;
    // "pid (comm) S ppid pgrp ...": comm may hold anything, so parse after the last ')'.
    const std::size_t paren = stat->rfind(')');
    if (paren == std::string::npos) continue;
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (std::sscanf(stat->c_str() + paren + 1, " %c %ld %ld", &state, &ppid, &pgrp) != 3) continue;
    if (pgrp == pgid && state != 'Z' && state != 'X') return true;
  }
  return false;
}

}  // namespace

Result<std::unique_ptr<Launcher>> Launcher::Create(const Options& options) {
  struct sigaction sa {};
  if (sigaction(SIGCHLD, nullptr, &sa) == 0 &&
      ((!(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_IGN) || (sa.sa_flags & SA_NOCLDWAIT))) {
    return FailedPrecondition(
        "SIGCHLD is ignored in this process, so the exit status of tasks would be lost");
  }
  auto setup = CgroupTree::Open(options.cgroup_root);
  if (!setup.ok()) return setup.status();
  std::unique_ptr<Launcher> launcher(
      new Launcher(options, std::move(setup->tree), std::move(setup->note)));
  launcher->Log(launcher->cgroup_note_);
  return launcher;
}

Launcher::Launcher(Options options, std::unique_ptr<CgroupTree> cgroups, std::string note)
    : options_(std::move(options)),
      cgroups_(std::move(cgroups)),
      cgroup_note_(std::move(note)),
      root_(geteuid() == 0) {}

Launcher::~Launcher() = default;

bool Launcher::cgroups_enabled() const {
  return cgroups_ != nullptr;
}
bool Launcher::memory_limits_enabled() const {
  return cgroups_ && cgroups_->has("memory");
}
bool Launcher::cpu_binding_enabled() const {
  return cgroups_ && cgroups_->has("cpuset");
}
bool Launcher::cpu_limits_enabled() const {
  return cgroups_ && cgroups_->has("cpu");
}
std::string Launcher::cgroup_root() const {
  return cgroups_ ? cgroups_->root() : std::string();
}

void Launcher::Log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::fprintf(stderr, "lockstep-agent: launcher: %s\n", line.c_str());
  }
}

Result<pid_t> Launcher::Spawn(const TaskSpec& spec, const std::function<bool()>& give_up) {
  if (!root_ && (spec.uid != geteuid() || spec.gid != getegid())) {
    return PermissionDenied("the launcher runs as uid " + std::to_string(geteuid()) + " gid " +
                            std::to_string(getegid()) + " and cannot run a task as uid " +
                            std::to_string(spec.uid) + " gid " + std::to_string(spec.gid));
  }
  if (spec.memory_limit_mb < 0) return InvalidArgument("negative memory limit");
  if (std::any_of(spec.cpus.begin(), spec.cpus.end(), [](int c) { return c < 0; })) {
    return InvalidArgument("negative CPU number");
  }
  if ((spec.memory_limit_mb > 0 || !spec.cpus.empty() || spec.cpu_limit > 0) &&
      spec.cgroup_name.empty()) {
    return InvalidArgument("a memory or CPU limit needs a cgroup_name");
  }
  if (!spec.cgroup_name.empty()) LOCKSTEP_RETURN_IF_ERROR(ValidateCgroupName(spec.cgroup_name));
  // The working directory is the user's: only the child, as the user, looks at it (chdir).
  if (spec.cwd.empty()) return InvalidArgument("the task has no working directory");
  auto plan = internal::ExecPlan::Build(spec, root_);
  if (!plan.ok()) return plan.status();

  std::optional<CgroupLeaf> leaf;
  const std::string& name = spec.cgroup_name;
  if (cgroups_ && !name.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (cgroups_in_use_.count(name)) {
      return Status(StatusCode::kAlreadyExists, "cgroup " + name + " belongs to a running task");
    }
    auto created =
        cgroups_->CreateLeaf(name, CgroupLimits{spec.memory_limit_mb, spec.cpus, spec.cpu_limit});
    if (!created.ok()) return created.status();
    leaf = std::move(*created);
    cgroups_in_use_.insert(name);
  }
  auto release_cgroup = [&] {
    if (!leaf) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (Status s = cgroups_->RemoveLeaf(name); !s.ok()) Log(s.ToString());
    cgroups_in_use_.erase(name);
  };

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    release_cgroup();
    return IoError("cannot create a pipe: " + ErrnoText(errno));
  }
  UniqueFd error_read(fds[0]), error_write(fds[1]);
  internal::CgroupJoin join;
  if (leaf) {
    // One v2 cgroup and at most three v1 ones (cpu, cpuset, memory): all of them fit.
    static_assert(std::tuple_size_v<decltype(join.procs_fds)> == 4);
    join.procs_fds[0] = leaf->procs.get();
    for (std::size_t i = 0; i < leaf->v1_procs.size() && i + 1 < join.procs_fds.size(); ++i)
      join.procs_fds[i + 1] = leaf->v1_procs[i].get();
  }
  const pid_t pid = (*plan)->Fork(error_write.get(), join);
  const int fork_errno = errno;
  error_write.Reset();
  if (pid < 0) {
    release_cgroup();
    return Status(StatusCode::kUnavailable, "cannot fork: " + ErrnoText(fork_errno));
  }
  // Until the exec, the child acts on the user's files (working directory, output files): a
  // FIFO or a hung file system holds it there, and only `give_up` ends the wait.
  if (Status s = (*plan)->AwaitExec(pid, error_read.get(), give_up,
                                    std::chrono::steady_clock::time_point::max());
      !s.ok()) {
    release_cgroup();
    return s;
  }
  std::lock_guard<std::mutex> lock(mu_);
  Task& t = tasks_[pid];
  if (leaf) {
    t.cgroup_name = name;
    t.cgroup_path = leaf->path;
    t.oom_kills_at_start = leaf->oom_kills_at_start;
  }
  return pid;
}

bool Launcher::PollExit(pid_t pid, Task& t, bool block) {
  if (t.exited) return true;
  const Peek p = PeekExit(pid, block);
  if (p.state == Peek::kRunning) return false;
  t.exited = true;
  t.status_lost = p.state == Peek::kLost;
  t.exit = p.exit;
  t.exited_at = Clock::now();
  return true;
}

bool Launcher::KillLeftovers(pid_t pid, Task& t) {
  if (!t.group_killed) {
    // The zombie main process holds the group id, so this reaches the right group.
    if (!t.status_lost) kill(-pid, SIGKILL);
    t.group_killed = true;
  }
  if (t.cgroup_path.empty() || !cgroups_->Populated(t.cgroup_path)) return true;
  if (Status s = cgroups_->SignalAll(t.cgroup_path, SIGKILL); !s.ok()) Log(s.ToString());
  if (!cgroups_->Populated(t.cgroup_path)) return true;
  if (Clock::now() - t.exited_at < kCleanupPatience) return false;
  Log("processes of task " + std::to_string(pid) + " in " + t.cgroup_path +
      " outlived SIGKILL for " + std::to_string(kCleanupPatience.count()) +
      " s; reporting the task as ended and leaving the cgroup");
  return true;
}

TaskExit Launcher::Finish(pid_t pid, Task& t) {
  TaskExit e = t.exit;
  if (!t.status_lost) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (!t.cgroup_path.empty()) {
    e.oom_killed = cgroups_->OomKills(t.cgroup_path) > t.oom_kills_at_start;
    if (Status s = cgroups_->RemoveLeaf(t.cgroup_name); !s.ok()) Log(s.ToString());
    cgroups_in_use_.erase(t.cgroup_name);
  }
  return e;
}

std::vector<std::pair<pid_t, TaskExit>> Launcher::Reap() {
  std::vector<std::pair<pid_t, TaskExit>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = tasks_.begin(); it != tasks_.end();) {
    const pid_t pid = it->first;
    Task& t = it->second;
    if (t.waited || !PollExit(pid, t, /*block=*/false) || !KillLeftovers(pid, t)) {
      ++it;
      continue;
    }
    out.emplace_back(pid, Finish(pid, t));
    it = tasks_.erase(it);
  }
  return out;
}

Result<TaskExit> Launcher::Wait(pid_t pid) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tasks_.find(pid);
    if (it == tasks_.end()) return NotFound("no running task with pid " + std::to_string(pid));
    if (it->second.waited) {
      return FailedPrecondition("another Wait is waiting for task " + std::to_string(pid));
    }
    it->second.waited = true;
  }
  const Peek p = PeekExit(pid, /*block=*/true);  // without the lock: may take long
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      Task& t = tasks_.at(pid);  // `waited` keeps Reap from removing it
      if (!t.exited) {
        t.exited = true;
        t.status_lost = p.state == Peek::kLost;
        t.exit = p.exit;
        t.exited_at = Clock::now();
      }
      if (KillLeftovers(pid, t)) {
        TaskExit e = Finish(pid, t);
        tasks_.erase(pid);
        return e;
      }
    }
    std::this_thread::sleep_for(kWaitPoll);
  }
}

Status Launcher::SignalLeader(pid_t pid, int signo) {
  std::lock_guard<std::mutex> lock(mu_);  // the task cannot be reaped (its pid reused) meanwhile
  auto it = tasks_.find(pid);
  if (it == tasks_.end() || it->second.status_lost)
    return NotFound("no running task with pid " + std::to_string(pid));
  if (kill(pid, signo) != 0 && errno != ESRCH)
    return Status(errno == EPERM ? StatusCode::kPermissionDenied : StatusCode::kIoError,
                  "cannot signal " + std::to_string(pid) + ": " + ErrnoText(errno));
  return Status::Ok();
}

Status Launcher::Signal(pid_t pid, int signo) {
  // Under the lock, so that the task cannot be reaped (and its pid reused) meanwhile.
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tasks_.find(pid);
  if (it == tasks_.end()) return NotFound("no running task with pid " + std::to_string(pid));
  const Task& t = it->second;
  int group_error = 0;
  if (!t.status_lost && kill(-pid, signo) != 0 && errno != ESRCH) group_error = errno;
  if (!t.cgroup_path.empty()) LOCKSTEP_RETURN_IF_ERROR(cgroups_->SignalAll(t.cgroup_path, signo));
  if (group_error != 0) {
    return Status(
        group_error == EPERM ? StatusCode::kPermissionDenied : StatusCode::kIoError,
        "cannot signal process group " + std::to_string(pid) + ": " + ErrnoText(group_error));
  }
  return Status::Ok();
}

bool Launcher::AnythingLeft(pid_t pid) {
  std::string cgroup_path;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tasks_.find(pid);
    if (it == tasks_.end()) return false;  // reaped: nothing left
    if (!PollExit(pid, it->second, /*block=*/false)) return true;
    cgroup_path = it->second.cgroup_path;
  }
  if (!cgroup_path.empty()) return cgroups_->Populated(cgroup_path);
  return GroupHasLiveMembers(pid);
}

Status Launcher::Terminate(pid_t pid, std::chrono::milliseconds grace) {
  // Stopped or frozen processes must see the SIGTERM.
  LOCKSTEP_RETURN_IF_ERROR(Suspend(pid, false));
  LOCKSTEP_RETURN_IF_ERROR(Signal(pid, SIGTERM));
  const auto deadline = Clock::now() + grace;
  auto poll = std::chrono::milliseconds(5);
  while (AnythingLeft(pid)) {
    const auto now = Clock::now();
    if (now >= deadline) {
      Status s = Signal(pid, SIGKILL);
      return s.code() == StatusCode::kNotFound ? Status::Ok() : s;
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(poll, deadline - now));
    poll = std::min(poll * 2, std::chrono::milliseconds(100));
  }
  return Status::Ok();
}

}  // namespace lockstep::agent
