#include "backend/agent/run_as_user.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "backend/agent/cgroup.h"
#include "backend/agent/child_output.h"
#include "backend/agent/exec_plan.h"

namespace lockstep::agent {
namespace {

using Clock = std::chrono::steady_clock;

// Waits for the child until `deadline`, then kills its group and reaps it. True with its wait
// status when it exited in time.
bool ReapBy(pid_t pid, Clock::time_point deadline, int& status) {
  const ChildWait waited = WaitChildUntil(pid, deadline, status);
  if (waited != ChildWait::kTimedOut) return waited == ChildWait::kExited;
  ::kill(-pid, SIGKILL);  // it leads its own session (ExecPlan's setsid)
  ::waitpid(pid, &status, 0);
  return false;
}

}  // namespace

Result<std::string> RunAsUser(const UserCommand& command) {
  if (command.argv.empty() || command.argv[0].empty() || command.argv[0][0] != '/')
    return InvalidArgument("RunAsUser needs an absolute program path");
  const bool root = ::geteuid() == 0;
  if (!root && (command.uid != ::geteuid() || command.gid != ::getegid()))
    return PermissionDenied("the agent runs as uid " + std::to_string(::geteuid()) +
                            " and cannot act as uid " + std::to_string(command.uid));
  int out_fds[2], err_fds[2];
  if (::pipe2(out_fds, O_CLOEXEC) != 0)
    return IoError(std::string("cannot create a pipe: ") + std::strerror(errno));
  UniqueFd out_read(out_fds[0]), out_write(out_fds[1]);
  if (::pipe2(err_fds, O_CLOEXEC) != 0)
    return IoError(std::string("cannot create a pipe: ") + std::strerror(errno));
  UniqueFd error_read(err_fds[0]), error_write(err_fds[1]);

  TaskSpec spec;
  spec.argv = command.argv;
  spec.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}};
  spec.cwd = command.cwd;
  spec.uid = command.uid;
  spec.gid = command.gid;
  spec.groups = command.groups;
  spec.stdout_fd = out_write.get();
  spec.stderr_fd = out_write.get();
  spec.stdin_fd = command.stdin_fd;
  spec.core_limit_bytes = 0;
  auto plan = internal::ExecPlan::Build(spec, root);
  if (!plan.ok()) return plan.status();

  const pid_t pid = (*plan)->Fork(error_write.get());
  const int fork_errno = errno;
  out_write.Reset();
  error_write.Reset();
  if (pid < 0) return Status(StatusCode::kUnavailable, std::string("cannot fork: ") + std::strerror(fork_errno));

  const auto deadline = Clock::now() + command.timeout;
  const std::string late = "'" + command.argv[0] + "' as uid " + std::to_string(command.uid) +
                           " did not finish within " + std::to_string(command.timeout.count()) +
                           " ms (a file system that does not answer?)";
  if (Status s = (*plan)->AwaitExec(pid, error_read.get(), {}, deadline); !s.ok()) {
    if (Clock::now() >= deadline) return Status(StatusCode::kUnavailable, late);
    return s;
  }
  int status = 0;
  std::string out;
  const bool closed = ReadChildOutput(out_read.get(), out, deadline, command.max_output);
  if (!ReapBy(pid, closed ? deadline : Clock::now(), status))
    return Status(StatusCode::kUnavailable, late);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return out;
  const std::string first = FirstLineOf(out);
  return FailedPrecondition("'" + command.argv[0] + "' as uid " + std::to_string(command.uid) +
                            (WIFSIGNALED(status) ? " was killed by signal " +
                                                       std::to_string(WTERMSIG(status))
                                                 : " exited " + std::to_string(WEXITSTATUS(status))) +
                            (first.empty() ? "" : ": " + first));
}

}  // namespace lockstep::agent
