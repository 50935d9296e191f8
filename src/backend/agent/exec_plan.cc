#include "backend/agent/exec_plan.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
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

void ExecPlan::RunChild(int error_fd, int cgroup_procs_fd) const {
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
  // Descriptors the agent opened without O_CLOEXEC (in other threads, too) must not reach the task.
  if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd < max_fd_; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  if (setsid() < 0) fail(ChildStage::kSetsid, errno);
  // Lowering a limit never fails; a task may not raise it again past the hard limit.
  if (set_core_limit_) setrlimit(RLIMIT_CORE, &core_limit_);
  if (cgroup_procs_fd >= 0 && write(cgroup_procs_fd, "0", 1) != 1) fail(ChildStage::kCgroup, errno);
  if (switch_user_) {
    if (setgroups(groups_.size(), groups_.data()) != 0) fail(ChildStage::kSetgroups, errno);
    if (setgid(gid_) != 0) fail(ChildStage::kSetgid, errno);
    if (setuid(uid_) != 0) fail(ChildStage::kSetuid, errno);
  }
  if (!cwd_.empty() && chdir(cwd_.c_str()) != 0) fail(ChildStage::kChdir, errno);
  const int in =
      AboveStdio(stdin_fd_ >= 0 ? stdin_fd_ : open(stdin_path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (in < 0) fail(ChildStage::kStdin, errno);
  const int out_flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append_ ? O_APPEND : O_TRUNC);
  const int out =
      AboveStdio(stdout_fd_ >= 0 ? stdout_fd_ : open(stdout_path_.c_str(), out_flags, 0644));
  if (out < 0) fail(ChildStage::kStdout, errno);
  int err = out;
  if (stderr_fd_ >= 0) {
    err = AboveStdio(stderr_fd_);
    if (err < 0) fail(ChildStage::kStderr, errno);
  } else if (!share_stderr_) {
    err = AboveStdio(open(stderr_path_.c_str(), out_flags, 0644));
    if (err < 0) fail(ChildStage::kStderr, errno);
  }
  if (dup2(in, 0) < 0) fail(ChildStage::kStdin, errno);
  if (dup2(out, 1) < 0) fail(ChildStage::kStdout, errno);
  if (dup2(err, 2) < 0) fail(ChildStage::kStderr, errno);
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
