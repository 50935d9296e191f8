#include "backend/agent/child_output.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

namespace lockstep::agent {

ChildWait WaitChildUntil(pid_t pid, std::chrono::steady_clock::time_point deadline, int& status) {
  while (true) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return ChildWait::kExited;
    if (r < 0 && errno != EINTR) return ChildWait::kLost;
    if (std::chrono::steady_clock::now() >= deadline) return ChildWait::kTimedOut;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool ReadChildOutput(int fd, std::string& out, std::chrono::steady_clock::time_point deadline,
                     std::size_t max_bytes) {
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return ready != 0;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;  // closed: the program (and what it started) is done writing
    if (out.size() < max_bytes) out.append(buf, static_cast<std::size_t>(n));
  }
}

std::string FirstLineOf(const std::string& out) {
  std::string line = out.substr(0, out.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  if (line.size() > 200) line.resize(200);
  return line;
}

}  // namespace lockstep::agent
