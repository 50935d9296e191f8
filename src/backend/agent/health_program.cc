#include "backend/agent/health_program.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace lockstep::agent {
namespace {

constexpr int kUnknown = 3;
constexpr std::size_t kMaxOutput = 64 * 1024;  // the reason is one line; the rest is dropped

backend::HealthFinding Unknown(const std::string& why) {
  return {"program", -1, kUnknown, why};
}

std::string FirstLine(const std::string& out) {
  std::string line = out.substr(0, out.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  if (line.size() > 200) line.resize(200);
  return line;
}

// Reads the child's output until it closes the pipe or `deadline`; false on the deadline.
bool ReadUntil(int fd, std::string& out, std::chrono::steady_clock::time_point deadline) {
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return ready == 0 ? false : true;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;  // closed: the program (and what it started) is done writing
    if (out.size() < kMaxOutput) out.append(buf, static_cast<std::size_t>(n));
  }
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
  const bool closed = ReadUntil(pipefd[0], out, deadline);
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
  if (code == 127) return Unknown(FirstLine(out));
  if (code > kUnknown) return Unknown("health program exited " + std::to_string(code));
  return {"program", -1, code, FirstLine(out)};
}

}  // namespace lockstep::agent
