#include "cli/srun_input.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "client/api_client.h"
#include "common/base64.h"

namespace lockstep::cli {
namespace {

// How long one post waits for room when lockstepd holds as much input as it keeps.
constexpr int kRoomWaitMs = 1000;
constexpr std::size_t kReadSize = 64 << 10;

// The SIGWINCH handler's target: the forwarder's wake pipe (one forwarder per srun).
std::atomic<int> g_winch_fd{-1};

void OnWindowChange(int) {
  const int fd = g_winch_fd.load();
  if (fd >= 0) {
    const int saved = errno;
    [[maybe_unused]] ssize_t n = ::write(fd, "w", 1);
    errno = saved;
  }
}

}  // namespace

bool TerminalSize(int& rows, int& cols) {
  struct winsize ws {};
  for (int fd : {0, 1})
    if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
      rows = ws.ws_row, cols = ws.ws_col;
      return true;
    }
  return false;
}

bool StdinIsEmpty() {
  struct stat st {
  }, null{};
  if (::fstat(0, &st) != 0) return true;
  return S_ISCHR(st.st_mode) && ::stat("/dev/null", &null) == 0 && st.st_rdev == null.st_rdev;
}

Status AddStepInputFields(const std::map<std::string, std::string>& options,
                          nlohmann::json& request) {
  auto input = options.find("input");
  const bool pty = options.count("pty") > 0;
  std::string mode = input == options.end() ? "0" : input->second;
  if (pty) {
    if (input != options.end() && mode != "0")
      return InvalidArgument("--pty gives task 0 the terminal: --input=" + mode +
                             " cannot be used with it");
    mode = "0";
    request["pty"] = true;
    int rows = 0, cols = 0;
    if (TerminalSize(rows, cols)) request["rows"] = rows, request["cols"] = cols;
  }
  if (mode.empty())
    return InvalidArgument("--input: an empty value (all, none, a task id or a file)");
  const bool task = mode.find_first_not_of("0123456789") == std::string::npos;
  if (mode == "all" || mode == "none" || task) {
    // Nothing to read: the tasks get /dev/null rather than a pipe that ends at once.
    request["input"] = StdinIsEmpty() && !pty ? "none" : mode;
    if (task && mode.size() > 7) return InvalidArgument("--input=" + mode + ": no such task");
  } else {
    request["input_file"] = mode;  // a Slurm filename pattern, opened by each task's agent
  }
  return Status::Ok();
}

RawTerminal::RawTerminal() {
  if (!::isatty(0) || ::tcgetattr(0, &saved_) != 0) return;
  termios raw = saved_;
  ::cfmakeraw(&raw);
  active_ = ::tcsetattr(0, TCSADRAIN, &raw) == 0;  // keys typed ahead are kept
}

RawTerminal::~RawTerminal() {
  if (active_) ::tcsetattr(0, TCSADRAIN, &saved_);
}

StdinForwarder::StdinForwarder(unsigned long long job, int step, bool pty, Writer writer)
    : StdinForwarder("/api/v1/jobs/" + std::to_string(job) + "/steps/" + std::to_string(step) +
                         "/input?wait_ms=" + std::to_string(kRoomWaitMs),
                     pty, writer) {}

StdinForwarder::StdinForwarder(std::string target, bool pty)
    : StdinForwarder(std::move(target), pty, Writer::kSrun) {}

StdinForwarder::StdinForwarder(std::string target, bool pty, Writer writer)
    : where_(std::move(target)), pty_(pty), writer_(writer) {
  if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
  if (pty_ && wake_[1] >= 0) {
    g_winch_fd = wake_[1];
    struct sigaction sa {};
    sa.sa_handler = OnWindowChange;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(SIGWINCH, &sa, nullptr);
  }
  thread_ = std::thread([this] { Loop(); });
}

StdinForwarder::~StdinForwarder() {
  if (pty_) ::signal(SIGWINCH, SIG_DFL);
  g_winch_fd = -1;
  stopping_ = true;
  if (wake_[1] >= 0) [[maybe_unused]]
    ssize_t n = ::write(wake_[1], "q", 1);
  thread_.join();
  for (int fd : wake_)
    if (fd >= 0) ::close(fd);
}

void StdinForwarder::Loop() {
  client::ApiClient api;
  const bool append = writer_ == Writer::kAttached;
  unsigned long long sent = 0;  // srun: lockstepd took everything before this offset
  // Posts `data` (and the end, the terminal's size) until lockstepd took it all; false when the
  // step is gone or srun is stopping.
  auto post = [&](std::string data, bool eof, bool with_size) {
    for (;;) {
      nlohmann::json body = {{"data", Base64Encode(data)}, {"eof", eof}};
      if (append) {
        body["append"] = true;
      } else {
        body["offset"] = sent;
      }
      int rows = 0, cols = 0;
      if (with_size && TerminalSize(rows, cols)) body["rows"] = rows, body["cols"] = cols;
      Result<nlohmann::json> r = api.Post(where_, body);
      if (!r.ok() || r->value("closed", false)) return false;
      const unsigned long long took =
          append ? r->value("taken", 0ULL) : r->value("offset", sent) - sent;
      data.erase(0, static_cast<std::size_t>(std::min<unsigned long long>(took, data.size())));
      sent += took;
      if (data.empty()) return true;
      if (stopping_) return false;
    }
  };
  std::string buf(kReadSize, '\0');
  for (;;) {
    pollfd fds[2] = {{wake_[0], POLLIN, 0}, {0, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents) {
      char c[64];
      const ssize_t n = ::read(wake_[0], c, sizeof c);
      bool resized = false;
      for (ssize_t i = 0; i < n; ++i) {
        if (c[i] == 'q') return;
        resized = true;
      }
      if (resized && !post("", false, true)) return;
    }
    if (fds[1].revents) {
      const ssize_t n = ::read(0, buf.data(), buf.size());
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        (void)post("", true, false);  // end of file (or an unreadable stdin): the tasks see its end
        return;
      }
      if (!post(buf.substr(0, static_cast<std::size_t>(n)), false, false)) return;
    }
  }
}

}  // namespace lockstep::cli
