#include "backend/agent/job_hook.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "backend/agent/child_output.h"

namespace lockstep::agent {
namespace {

constexpr std::size_t kMaxOutput = 16 * 1024;

JobHookOutcome Failed(std::string what, const std::string& out) {
  const std::string line = FirstLineOf(out);
  return {false, line.empty() ? what : what + ": " + line};
}

}  // namespace

JobHookOutcome RunJobHook(const JobHookRun& hook) {
  // Everything the child needs is built before fork: after it, only system calls.
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : hook.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string program = hook.program;
  char* argv[] = {program.data(), nullptr};
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0)
    return {false, "cannot run " + hook.program + ": pipe: " + std::strerror(errno)};
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipefd[0]), ::close(pipefd[1]);
    return {false, "cannot run " + hook.program + ": fork: " + std::strerror(errno)};
  }
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group: a timeout ends everything it started
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(pipefd[1], 1);
    ::dup2(pipefd[1], 2);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // the agent blocks some signals; not the hook
    ::execve(argv[0], argv, envp.data());
    const char* err = std::strerror(errno);
    (void)!::write(2, "cannot run: ", 12);
    (void)!::write(2, err, std::strlen(err));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(pipefd[1]);
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + hook.timeout;
  const bool closed = ReadChildOutput(pipefd[0], out, deadline, kMaxOutput);
  ::close(pipefd[0]);
  int status = 0;
  // Its output is closed; the program may still be exiting: look until the deadline.
  const bool exited = closed && WaitChildUntil(pid, deadline, status) == ChildWait::kExited;
  if (!exited) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return Failed("timed out after " + std::to_string(hook.timeout.count()) + " s", out);
  }
  ::kill(-pid, SIGKILL);  // what it left running in its group goes with it
  if (WIFSIGNALED(status))
    return Failed("killed by signal " + std::to_string(WTERMSIG(status)), out);
  if (WEXITSTATUS(status) != 0) return Failed("exit " + std::to_string(WEXITSTATUS(status)), out);
  return {true, ""};
}

}  // namespace lockstep::agent
