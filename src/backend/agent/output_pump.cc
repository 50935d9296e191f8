#include "backend/agent/output_pump.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace lockstep::agent {
namespace {

constexpr std::size_t kReadSize = 64 * 1024;

}  // namespace

OutputPump::OutputPump(Options options)
    : options_(std::move(options)), wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  thread_ = std::thread([this] { Loop(); });
}

OutputPump::~OutputPump() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  Wake();
  thread_.join();
}

void OutputPump::Wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_.get(), &one, sizeof one);
}

void OutputPump::Add(std::uint64_t task, UniqueFd out, UniqueFd err) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto [fd, stream] : {std::pair{&out, 1}, std::pair{&err, 2}}) {
      if (fd->get() < 0) continue;
      ::fcntl(fd->get(), F_SETFL, ::fcntl(fd->get(), F_GETFL) | O_NONBLOCK);
      incoming_.push_back({task, stream, std::move(*fd)});
    }
    // A task without pipes is closed at once, through the loop, so `closed` comes from there.
    if (out.get() < 0 && err.get() < 0 &&
        std::none_of(incoming_.begin(), incoming_.end(),
                     [&](const Stream& s) { return s.task == task; }))
      incoming_.push_back({task, 0, UniqueFd()});
  }
  Wake();
}

void OutputPump::Abandon(std::uint64_t task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    abandon_.insert(task);
  }
  Wake();
}

void OutputPump::Ack(std::size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    unacked_ -= std::min(unacked_, bytes);
  }
  Wake();
}

bool OutputPump::ReadOnce(Stream& s) {
  char buf[kReadSize];
  ssize_t n;
  do {
    n = ::read(s.fd.get(), buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
  if (n <= 0) {
    s.fd.Reset();
    return false;
  }
  if (pending_.empty()) first_pending_ = std::chrono::steady_clock::now();
  if (!pending_.empty() && pending_.back().task == s.task && pending_.back().stream == s.stream)
    pending_.back().data.append(buf, static_cast<std::size_t>(n));
  else
    pending_.push_back({s.task, s.stream, std::string(buf, static_cast<std::size_t>(n))});
  pending_bytes_ += static_cast<std::size_t>(n);
  return true;
}

void OutputPump::Flush() {
  if (!pending_.empty()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      unacked_ += pending_bytes_;
    }
    std::vector<OutputChunk> batch;
    batch.swap(pending_);
    pending_bytes_ = 0;
    if (options_.sink) options_.sink(std::move(batch));
  }
  std::vector<std::uint64_t> closed;
  closed.swap(closed_tasks_);
  for (std::uint64_t task : closed)
    if (options_.closed) options_.closed(task);
}

void OutputPump::Loop() {
  using Clock = std::chrono::steady_clock;
  while (true) {
    bool reading = true;
    std::set<std::uint64_t> abandon;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) break;
      for (Stream& s : incoming_) {
        ++open_per_task_[s.task];
        streams_.push_back(std::move(s));
      }
      incoming_.clear();
      abandon.swap(abandon_);
      reading = unacked_ < options_.max_unacked_bytes;
    }
    // Abandoned tasks: what is in their pipes now (up to 1 MiB, even past the memory bound),
    // then close.
    for (Stream& s : streams_)
      if (abandon.count(s.task) && s.fd.get() >= 0) {
        const std::size_t start = pending_bytes_;
        std::size_t before;
        do {
          before = pending_bytes_;
        } while (ReadOnce(s) && pending_bytes_ > before && pending_bytes_ - start < kReadSize * 16);
        s.fd.Reset();
      }
    std::vector<pollfd> fds{{wake_.get(), POLLIN, 0}};
    for (const Stream& s : streams_)
      if (s.fd.get() >= 0 && reading) fds.push_back({s.fd.get(), POLLIN, 0});
    int timeout = -1;
    if (!pending_.empty()) {
      auto due = first_pending_ + options_.flush_interval;
      timeout = static_cast<int>(std::max<std::int64_t>(
          0, std::chrono::duration_cast<std::chrono::milliseconds>(due - Clock::now()).count()));
    }
    if (!closed_tasks_.empty()) timeout = 0;
    int ready = ::poll(fds.data(), fds.size(), timeout);
    if (ready < 0 && errno != EINTR) break;
    if (fds[0].revents & POLLIN) {
      std::uint64_t v;
      [[maybe_unused]] ssize_t n = ::read(wake_.get(), &v, sizeof v);
    }
    std::size_t f = 1;
    for (Stream& s : streams_) {
      if (s.fd.get() < 0 || !reading) continue;
      if (f < fds.size() && fds[f].fd == s.fd.get() && fds[f].revents != 0) ReadOnce(s);
      ++f;
    }
    // Streams closed (end of file, abandoned, or a task added without pipes).
    for (auto it = streams_.begin(); it != streams_.end();) {
      if (it->fd.get() >= 0) {
        ++it;
        continue;
      }
      if (--open_per_task_[it->task] == 0) {
        open_per_task_.erase(it->task);
        closed_tasks_.push_back(it->task);
      }
      it = streams_.erase(it);
    }
    if (!closed_tasks_.empty() || pending_bytes_ >= options_.flush_bytes ||
        (!pending_.empty() && Clock::now() >= first_pending_ + options_.flush_interval))
      Flush();
  }
}

}  // namespace lockstep::agent
