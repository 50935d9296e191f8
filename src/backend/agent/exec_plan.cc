#include "backend/agent/exec_plan.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <initializer_list>
#include <utility>
#include <cerrno>
#include <string_view>
#include <system_error>

namespace lockstep::agent::internal {
namespace {

constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

bool HasNul(std::string_view s) {
  return s.find('\0') != std::string_view::npos;
}

std::string ErrnoText(int err) {
  return std::error_code(err, std::generic_category()).message();
}

StatusCode CodeForErrno(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return StatusCode::kNotFound;
    case EACCES:
    case EPERM:
    case EROFS:
      return StatusCode::kPermissionDenied;
    default:
      return StatusCode::kFailedPrecondition;
  }
}

// Makes fd at least 3, so that dup2 onto 0, 1 and 2 cannot clobber another of the task's files.
// Async-signal-safe.
int AboveStdio(int fd) {
  if (fd < 0 || fd >= 3) return fd;
  return fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

// Closes every descriptor from 3 up but those in `keep` (negative entries ignored).
// Async-signal-safe: close_range(2), or close(2) up to `max_fd` where the kernel lacks it.
void CloseAllBut(std::initializer_list<int> keep_list, int max_fd) {
  int keep[12];
  int n = 0;
  for (int fd : keep_list)
    if (fd >= 3 && n < 12) keep[n++] = fd;
  for (int i = 1; i < n; ++i)  // insertion sort: a handful of entries
    for (int j = i; j > 0 && keep[j - 1] > keep[j]; --j) std::swap(keep[j - 1], keep[j]);
  unsigned from = 3;
  for (int i = 0; i <= n; ++i) {
    const unsigned to = i < n ? static_cast<unsigned>(keep[i]) : ~0U;
    if (to > from) {
      const unsigned last = to == ~0U ? ~0U : to - 1;
      if (close_range(from, last, 0) != 0) {
        const int end = last == ~0U ? max_fd : static_cast<int>(last) + 1;
        for (int fd = static_cast<int>(from); fd < end; ++fd) close(fd);
      }
    }
    if (i < n) from = static_cast<unsigned>(keep[i]) + 1;
  }
}

}  // namespace

Result<std::unique_ptr<ExecPlan>> ExecPlan::Build(const TaskSpec& spec, bool switch_user) {
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return InvalidArgument("task has no program (argv is empty)");
  }
  for (const std::string& a : spec.argv) {
    if (HasNul(a)) return InvalidArgument("task argument contains a NUL byte");
  }
  std::unique_ptr<ExecPlan> p(new ExecPlan());
  if (spec.core_limit_bytes >= 0) {
    rlimit own{};
    if (getrlimit(RLIMIT_CORE, &own) == 0) {
      const rlim_t want = static_cast<rlim_t>(spec.core_limit_bytes);
      const rlim_t limit = own.rlim_max == RLIM_INFINITY ? want : std::min(want, own.rlim_max);
      p->core_limit_ = {limit, limit};
      p->set_core_limit_ = true;
    }
  }
  p->argv_strings_ = spec.argv;
  for (const auto& [key, value] : spec.env) {
    if (key.empty() || key.find('=') != std::string::npos || HasNul(key) || HasNul(value)) {
      return InvalidArgument("bad environment variable name '" + key + "'");
    }
    p->env_strings_.push_back(key + "=" + value);
  }
  for (const std::string* path :
       {&spec.cwd, &spec.stdin_path, &spec.stdout_path, &spec.stderr_path}) {
    if (HasNul(*path)) return InvalidArgument("task path contains a NUL byte");
  }
  const std::string& program = spec.argv[0];
  if (program.find('/') != std::string::npos) {
    p->candidates_.push_back(program);
  } else {
    auto it = spec.env.find("PATH");
    p->search_path_ = it != spec.env.end() ? it->second : kDefaultPath;
    std::string_view rest = p->search_path_;
    while (true) {
      const std::size_t colon = rest.find(':');
      std::string_view dir = rest.substr(0, colon);
      p->candidates_.push_back((dir.empty() ? std::string(".") : std::string(dir)) + "/" + program);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  for (std::string& s : p->argv_strings_) p->argv_.push_back(s.data());
  p->argv_.push_back(nullptr);
  for (std::string& s : p->env_strings_) p->envp_.push_back(s.data());
  p->envp_.push_back(nullptr);

  p->cwd_ = spec.cwd;
  p->stdin_path_ = spec.stdin_path.empty() ? "/dev/null" : spec.stdin_path;
  p->stdout_path_ = spec.stdout_path.empty() ? "/dev/null" : spec.stdout_path;
  p->stdout_fd_ = spec.stdout_fd;
  p->stdin_fd_ = spec.stdin_fd;
  p->inherit_fd_ = spec.inherit_fd >= 3 ? spec.inherit_fd : -1;
  p->controlling_tty_ = spec.controlling_tty && spec.stdin_fd >= 0;
  p->stderr_fd_ = spec.stderr_fd;
  p->share_stderr_ =
      spec.stderr_fd < 0 && (spec.stderr_path.empty() || spec.stderr_path == p->stdout_path_);
  p->stderr_path_ = p->share_stderr_ ? p->stdout_path_ : spec.stderr_path;
  p->append_ = spec.append;
  p->switch_user_ = switch_user;
  p->uid_ = spec.uid;
  p->gid_ = spec.gid;
  p->groups_ = spec.groups;
  struct rlimit rl {};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    p->max_fd_ = static_cast<int>(std::min<rlim_t>(rl.rlim_cur, 1 << 16));
  } else {
    p->max_fd_ = 1 << 16;
  }
  return p;
}

void ExecPlan::RunChild(int error_fd, const CgroupJoin& join) const {
  auto fail = [error_fd](ChildStage stage, int err) {
    ChildError e;
    e.stage = static_cast<int>(stage);
    e.error = err;
    [[maybe_unused]] ssize_t n = write(error_fd, &e, sizeof e);
    _exit(127);
  };
  // The parent blocked every signal around fork. Ignored signals stay ignored across exec (the
  // agent ignores SIGPIPE, say), so every disposition goes back to the default before unblocking.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int s = 1; s < NSIG; ++s) {
    if (s != SIGKILL && s != SIGSTOP) sigaction(s, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // Descriptors of the agent's other threads (another launch's error pipe, say) are closed at
  // once, not only at exec: a child that then waits on the user's files (a FIFO, a hung NFS
  // path) must not hold another task's pipe open and so stall that task's launch.
  CloseAllBut({error_fd, join.procs_fds[0], join.procs_fds[1], join.procs_fds[2],
               join.procs_fds[3], stdin_fd_, stdout_fd_, stderr_fd_, inherit_fd_},
              max_fd_);
  if (setsid() < 0) fail(ChildStage::kSetsid, errno);
  // Lowering a limit never fails; a task may not raise it again past the hard limit.
  if (set_core_limit_) setrlimit(RLIMIT_CORE, &core_limit_);
  for (int fd : join.procs_fds)
    if (fd >= 0 && write(fd, "0", 1) != 1) fail(ChildStage::kCgroup, errno);
  if (switch_user_) {
    if (setgroups(groups_.size(), groups_.data()) != 0) fail(ChildStage::kSetgroups, errno);
    if (setgid(gid_) != 0) fail(ChildStage::kSetgid, errno);
    if (setuid(uid_) != 0) fail(ChildStage::kSetuid, errno);
  }
  // Each step that may wait on the user's files is announced first, so that a launch given up
  // while the child waits can say on what.
  auto entering = [error_fd](ChildStage stage) {
    const ChildError e{static_cast<int>(stage), 0};
    [[maybe_unused]] ssize_t n = write(error_fd, &e, sizeof e);
  };
  if (!cwd_.empty()) {
    entering(ChildStage::kChdir);
    if (chdir(cwd_.c_str()) != 0) fail(ChildStage::kChdir, errno);
  }
  if (stdin_fd_ < 0) entering(ChildStage::kStdin);
  const int in =
      AboveStdio(stdin_fd_ >= 0 ? stdin_fd_ : open(stdin_path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (in < 0) fail(ChildStage::kStdin, errno);
  const int out_flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append_ ? O_APPEND : O_TRUNC);
  if (stdout_fd_ < 0) entering(ChildStage::kStdout);
  const int out =
      AboveStdio(stdout_fd_ >= 0 ? stdout_fd_ : open(stdout_path_.c_str(), out_flags, 0644));
  if (out < 0) fail(ChildStage::kStdout, errno);
  int err = out;
  if (stderr_fd_ >= 0) {
    err = AboveStdio(stderr_fd_);
    if (err < 0) fail(ChildStage::kStderr, errno);
  } else if (!share_stderr_) {
    entering(ChildStage::kStderr);
    err = AboveStdio(open(stderr_path_.c_str(), out_flags, 0644));
    if (err < 0) fail(ChildStage::kStderr, errno);
  }
  entering(ChildStage::kExec);
  if (dup2(in, 0) < 0) fail(ChildStage::kStdin, errno);
  if (dup2(out, 1) < 0) fail(ChildStage::kStdout, errno);
  if (dup2(err, 2) < 0) fail(ChildStage::kStderr, errno);
  // Above the standard descriptors, so the dup2s left it alone; open across exec from here on.
  if (inherit_fd_ >= 0 && fcntl(inherit_fd_, F_SETFD, 0) != 0) fail(ChildStage::kExec, errno);
  // The task leads a new session (setsid above), so the terminal can become its own.
  if (controlling_tty_ && ioctl(0, TIOCSCTTY, 0) != 0) fail(ChildStage::kTerminal, errno);
  // As execvp: go on past directories without the program, remember a permission error.
  int last = ENOENT;
  bool denied = false;
  for (const std::string& path : candidates_) {
    execve(path.c_str(), argv_.data(), envp_.data());
    last = errno;
    if (last == EACCES) {
      denied = true;
    } else if (last != ENOENT && last != ENOTDIR && last != ESTALE && last != ENODEV &&
               last != ETIMEDOUT) {
      break;
    }
  }
  if (denied && (last == ENOENT || last == ENOTDIR)) last = EACCES;
  fail(ChildStage::kExec, last);
  _exit(127);  // not reached
}

namespace {

// What a child that has not executed yet is doing at `stage`, for a message.
std::string Doing(ChildStage stage, const std::string& cwd, const std::string& in,
                  const std::string& out, const std::string& err) {
  switch (stage) {
    case ChildStage::kChdir: return "changing to working directory '" + cwd + "'";
    case ChildStage::kStdin: return "opening input file '" + in + "'";
    case ChildStage::kStdout: return "opening output file '" + out + "'";
    case ChildStage::kStderr: return "opening error file '" + err + "'";
    case ChildStage::kExec: return "starting the program";
    default: return "preparing the task";
  }
}

}  // namespace

pid_t ExecPlan::Fork(int error_fd, const CgroupJoin& join) const {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t pid = fork();
  if (pid == 0) RunChild(error_fd, join);
  const int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = fork_errno;
  return pid;
}

Status ExecPlan::AwaitExec(pid_t pid, int error_read_fd, const std::function<bool()>& give_up,
                           std::chrono::steady_clock::time_point deadline) const {
  ChildStage stage = ChildStage::kSetsid;
  ChildError report;
  std::size_t have = 0;  // bytes of `report` read so far
  while (true) {
    pollfd p{error_read_fd, POLLIN, 0};
    const int ready = poll(&p, 1, 5);
    if (ready < 0 && errno != EINTR) return Internal("poll: " + ErrnoText(errno));
    if (ready > 0) {
      ssize_t n;
      do {
        n = read(error_read_fd, reinterpret_cast<char*>(&report) + have, sizeof report - have);
      } while (n < 0 && errno == EINTR);
      if (n == 0 && have == 0) return Status::Ok();  // executed: the pipe closed at exec
      if (n <= 0) break;                             // a torn report
      have += static_cast<std::size_t>(n);
      if (have < sizeof report) continue;
      have = 0;
      if (report.error == 0) {  // progress: the child entered a stage
        stage = static_cast<ChildStage>(report.stage);
        continue;
      }
      int status;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return Describe(report);
    }
    const bool late = std::chrono::steady_clock::now() >= deadline;
    if (!late && !(give_up && give_up())) continue;
    kill(-pid, SIGKILL);  // the child leads its session (setsid comes first)
    kill(pid, SIGKILL);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const std::string doing = Doing(stage, cwd_, stdin_path_, stdout_path_, stderr_path_);
    return Status(StatusCode::kUnavailable,
                  std::string(late ? "the task did not start in time" : "the task was ended before it started") +
                      ": it was still " + doing + " as uid " + std::to_string(uid_) +
                      (stage == ChildStage::kExec ? "" : " (a FIFO without a reader, or a file system that does not answer?)"));
  }
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return Internal("lost the error report of the task's child process");
}

Status ExecPlan::Describe(const ChildError& e) const {
  const std::string why = ErrnoText(e.error);
  const std::string as_user = " as uid " + std::to_string(uid_);
  switch (static_cast<ChildStage>(e.stage)) {
    case ChildStage::kSetsid:
      return Internal("cannot start a session for the task: " + why);
    case ChildStage::kCgroup:
      return Status(CodeForErrno(e.error), "cannot move the task into its cgroup: " + why);
    case ChildStage::kSetgroups:
    case ChildStage::kSetgid:
    case ChildStage::kSetuid:
      return PermissionDenied("cannot switch to uid " + std::to_string(uid_) + ", gid " +
                              std::to_string(gid_) + ": " + why);
    case ChildStage::kChdir:
      return Status(CodeForErrno(e.error),
                    "cannot change to working directory '" + cwd_ + "'" + as_user + ": " + why);
    case ChildStage::kStdin:
      return Status(CodeForErrno(e.error),
                    "cannot open input file '" + stdin_path_ + "'" + as_user + ": " + why);
    case ChildStage::kStdout:
      return Status(CodeForErrno(e.error),
                    "cannot open output file '" + stdout_path_ + "'" + as_user + ": " + why);
    case ChildStage::kStderr:
      return Status(CodeForErrno(e.error),
                    "cannot open error file '" + stderr_path_ + "'" + as_user + ": " + why);
    case ChildStage::kTerminal:
      return Status(CodeForErrno(e.error), "cannot make the pseudo-terminal the task's: " + why);
    case ChildStage::kExec: {
      std::string m = "cannot run '" + argv_strings_[0] + "'" + as_user + ": " + why;
      if (!search_path_.empty()) m += " (searched PATH=" + search_path_ + ")";
      return Status(CodeForErrno(e.error), m);
    }
  }
  return Internal("the task's child process failed at an unknown stage: " + why);
}

}  // namespace lockstep::agent::internal
