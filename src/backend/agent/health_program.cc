#include "backend/agent/health_program.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "backend/agent/child_output.h"

namespace lockstep::agent {
namespace {

constexpr int kUnknown = 3;
constexpr std::size_t kMaxOutput = 64 * 1024;  // the reason is one line; the rest is dropped

backend::HealthFinding Unknown(const std::string& why) {
  return {"program", -1, kUnknown, why};
}

}  // namespace

backend::HealthFinding RunHealthProgram(const std::string& program, const std::string& node,
                                        std::chrono::seconds timeout) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0)
    return Unknown("health program: pipe: " + std::string(std::strerror(errno)));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipefd[0]), ::close(pipefd[1]);
    return Unknown("health program: fork: " + std::string(std::strerror(errno)));
  }
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group: a timeout ends everything it started
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(pipefd[1], 1);
    ::dup2(pipefd[1], 2);
    ::setenv("SLURMD_NODENAME", node.c_str(), 1);
    ::setenv("LOCKSTEP_NODE", node.c_str(), 1);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // the agent blocks SIGTERM; the program not
    ::execl(program.c_str(), program.c_str(), static_cast<char*>(nullptr));
    std::fprintf(stderr, "cannot run %s: %s\n", program.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(pipefd[1]);
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const bool closed = ReadChildOutput(pipefd[0], out, deadline, kMaxOutput);
  ::close(pipefd[0]);
  int status = 0;
  // Its output closed; the program itself may linger a little (no child signal to wait on
  // here: the agent's reaper owns SIGCHLD), so look until the deadline.
  bool exited = false;
  while (closed && !exited && std::chrono::steady_clock::now() < deadline) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    exited = r == pid;
    if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!exited) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return Unknown("health program timed out after " + std::to_string(timeout.count()) + " s");
  }
  if (WIFSIGNALED(status))
    return Unknown("health program killed by signal " + std::to_string(WTERMSIG(status)));
  const int code = WEXITSTATUS(status);
  if (code == 127) return Unknown(FirstLineOf(out));
  if (code > kUnknown) return Unknown("health program exited " + std::to_string(code));
  return {"program", -1, code, FirstLineOf(out)};
}

}  // namespace lockstep::agent
