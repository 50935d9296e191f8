// A command on a pseudo-terminal of its own, driven as a person at a terminal would: what it
// prints is read from the terminal's master, keys are written to it, and the terminal's size is
// changed with TIOCSWINSZ (which sends the command SIGWINCH). For end-to-end tests of
// `srun --pty`. Header-only; the child dies with the test (PR_SET_PDEATHSIG).
#pragma once

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace lockstep::testing {

class PtySession {
 public:
  PtySession(std::vector<std::string> argv, const std::map<std::string, std::string>& env,
             const std::string& cwd, int rows, int cols) {
    struct winsize ws {};
    ws.ws_row = static_cast<unsigned short>(rows);
    ws.ws_col = static_cast<unsigned short>(cols);
    const pid_t parent = ::getpid();
    pid_ = ::forkpty(&master_, nullptr, nullptr, &ws);
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);
      if (::chdir(cwd.c_str()) != 0) ::_exit(126);
      for (const auto& [k, v] : env) {
        if (v.empty())
          ::unsetenv(k.c_str());
        else
          ::setenv(k.c_str(), v.c_str(), 1);
      }
      std::vector<char*> a;
      for (std::string& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      ::execv(a[0], a.data());
      ::_exit(127);
    }
  }
  ~PtySession() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (master_ >= 0) ::close(master_);
  }
  PtySession(const PtySession&) = delete;
  PtySession& operator=(const PtySession&) = delete;

  bool started() const { return pid_ > 0 && master_ >= 0; }
  void Write(const std::string& keys) {
    [[maybe_unused]] ssize_t n = ::write(master_, keys.data(), keys.size());
  }
  void Resize(int rows, int cols) {
    struct winsize ws {};
    ws.ws_row = static_cast<unsigned short>(rows);
    ws.ws_col = static_cast<unsigned short>(cols);
    ::ioctl(master_, TIOCSWINSZ, &ws);
  }
  // Reads until `text` has appeared after what earlier Expects matched; false when `timeout`
  // passes first or the terminal closes.
  bool Expect(const std::string& text, std::chrono::seconds timeout = std::chrono::seconds(30)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const std::size_t at = transcript_.find(text, matched_);
      if (at != std::string::npos) {
        matched_ = at + text.size();
        return true;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{master_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::read(master_, buf, sizeof buf);
      if (n <= 0) return false;  // EIO: every process on the terminal is gone
      transcript_.append(buf, static_cast<std::size_t>(n));
    }
  }
  // Waits for the command to end (reading its last output); its exit code, 128+N for signal N,
  // or -1 when it had not closed the terminal within 30 s (it is then killed).
  int Wait() {
    // Reads to the terminal's end: false at once when it closes, else after the timeout.
    const auto start = std::chrono::steady_clock::now();
    Expect("\x01never\x01", std::chrono::seconds(30));
    const bool closed = std::chrono::steady_clock::now() - start < std::chrono::seconds(30);
    if (!closed) ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    exited_ = true;
    if (!closed) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  const std::string& transcript() const { return transcript_; }

 private:
  pid_t pid_ = -1;
  int master_ = -1;
  bool exited_ = false;
  std::string transcript_;
  std::size_t matched_ = 0;
};

}  // namespace lockstep::testing
