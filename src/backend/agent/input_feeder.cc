#include "backend/agent/input_feeder.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "client/api_client.h"
#include "common/base64.h"
#include "common/log.h"

namespace lockstep::agent {
namespace {

// How long one poll for input waits: also how long Stop may take to end the thread.
constexpr int kPollWaitMs = 1000;

}  // namespace

InputFeeder::InputFeeder(Options options, std::vector<UniqueFd> pipes, UniqueFd pty)
    : options_(std::move(options)), pipes_(std::move(pipes)), pty_(std::move(pty)) {
  // Non-blocking, so a task that never reads its input cannot hold the thread past Stop.
  for (const UniqueFd& fd : pipes_)
    ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) | O_NONBLOCK);
  thread_ = std::thread([this] { Loop(); });
}

InputFeeder::~InputFeeder() {
  Stop();
  thread_.join();
}

bool InputFeeder::WriteAll(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    if (stop_) return false;
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 200);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return false;  // EPIPE (SIGPIPE is ignored): the task closed its input; EIO: terminal gone
    }
  }
  return true;
}

void InputFeeder::Loop() {
  client::ApiClient api(options_.server);
  std::uint64_t offset = 0, winsize_seen = 0;
  const std::string base = "/api/v1/agent/input?job_id=" + std::to_string(options_.job) +
                           "&step_id=" + std::to_string(options_.step) +
                           "&node=" + client::UrlEncode(options_.node) +
                           "&wait_ms=" + std::to_string(kPollWaitMs);
  while (!stop_) {
    Result<nlohmann::json> r = api.Get(base + "&offset=" + std::to_string(offset) +
                                       "&winsize=" + std::to_string(winsize_seen));
    if (!r.ok()) {
      if (r.status().code() != StatusCode::kUnavailable) {
        log::Warning("job {}.{}: cannot read srun's input: {}", options_.job, options_.step,
                     r.status().message());
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // lockstepd restarting
      continue;
    }
    if (r->value("closed", false)) break;
    const std::uint64_t size_version = r->value("winsize", std::uint64_t{0});
    if (pty_.get() >= 0 && size_version > winsize_seen) {
      winsize_seen = size_version;
      struct winsize ws {};
      ws.ws_row = static_cast<unsigned short>(r->value("rows", 0));
      ws.ws_col = static_cast<unsigned short>(r->value("cols", 0));
      if (ws.ws_row > 0 && ws.ws_col > 0) ::ioctl(pty_.get(), TIOCSWINSZ, &ws);
    }
    Result<std::string> data = Base64Decode(r->value("data", ""));
    if (data.ok() && !data->empty()) {
      for (UniqueFd& fd : pipes_)
        if (fd.get() >= 0 && !WriteAll(fd.get(), *data)) fd.Reset();
      if (pty_.get() >= 0 && !WriteAll(pty_.get(), *data)) pty_.Reset();
    }
    offset = r->value("offset", offset);
    if (r->value("eof", false)) {
      // The end of srun's input: the pipes close (the tasks read end of file); a terminal gets
      // its end-of-file character, as when one types it.
      pipes_.clear();
      termios t{};
      if (pty_.get() >= 0 && ::tcgetattr(pty_.get(), &t) == 0)
        (void)WriteAll(pty_.get(), std::string(1, static_cast<char>(t.c_cc[VEOF])));
      break;
    }
  }
  pipes_.clear();
  pty_.Reset();
  done_ = true;
}

}  // namespace lockstep::agent
