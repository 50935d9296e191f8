#include "controller/event_log.h"

#include <algorithm>
#include <utility>

namespace lockstep::controller {

EventLog::EventLog(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 1)) {
  timer_ = std::thread([this] { TimerLoop(); });
}

EventLog::~EventLog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  timer_.join();  // it answers every waiter before it ends
}

std::uint64_t EventLog::next_seq() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_seq_ + events_.size();
}

std::uint64_t EventLog::Append(nlohmann::json event) {
  std::uint64_t seq = 0;
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    seq = first_seq_ + events_.size();
    event["seq"] = seq;
    // Invalid UTF-8 in a job's name or reason is replaced, not thrown (U+FFFD).
    events_.push_back(event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    if (events_.size() > capacity_) {
      events_.pop_front();
      ++first_seq_;
    }
    wake = !waiters_.empty();
  }
  // The timer thread answers the waiters: Append runs under the controller's lock, and a
  // waiter's `done` writes to a connection.
  if (wake) changed_.notify_all();
  return seq;
}

EventBatch EventLog::TakeLocked(std::uint64_t from, std::size_t max, const Filter& keep) const {
  EventBatch b;
  const std::uint64_t end = first_seq_ + events_.size();
  if (from == 0) from = first_seq_;
  if (from < first_seq_) {
    b.dropped = first_seq_ - from;
    from = first_seq_;
  }
  b.next = from;
  for (std::uint64_t s = from; s < end && b.events.size() < max; ++s) {
    nlohmann::json e = nlohmann::json::parse(events_[s - first_seq_]);
    b.next = s + 1;
    if (!keep || keep(e)) b.events.push_back(std::move(e));
  }
  return b;
}

void EventLog::Read(std::uint64_t from, std::size_t max, std::chrono::milliseconds wait,
                    Filter keep, Done done) {
  EventBatch now;
  {
    std::lock_guard<std::mutex> lock(mu_);
    now = TakeLocked(from, max, keep);
    const bool nothing = now.events.empty() && now.dropped == 0;
    if (nothing && wait.count() > 0 && !stopping_) {
      // Events the filter hid are read past: wait for the next one after them.
      waiters_.push_back({std::max(from, now.next), max, std::move(keep), std::move(done),
                          std::chrono::steady_clock::now() + wait});
      changed_.notify_all();
      return;
    }
  }
  done(std::move(now));
}

void EventLog::TimerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    std::vector<std::pair<Done, EventBatch>> answers;
    const auto now = std::chrono::steady_clock::now();
    const std::uint64_t end = first_seq_ + events_.size();
    std::erase_if(waiters_, [&](Waiter& w) {
      if (w.from >= end && w.deadline > now && !stopping_) return false;
      EventBatch b = TakeLocked(w.from, w.max, w.keep);
      if (b.events.empty() && b.dropped == 0 && w.deadline > now && !stopping_) {
        w.from = b.next;  // only events this reader may not see came
        return false;
      }
      answers.emplace_back(std::move(w.done), std::move(b));
      return true;
    });
    if (!answers.empty()) {
      lock.unlock();
      for (auto& [done, batch] : answers) done(std::move(batch));
      lock.lock();
      continue;
    }
    if (stopping_ && waiters_.empty()) return;
    auto next = std::chrono::steady_clock::time_point::max();
    for (const Waiter& w : waiters_) next = std::min(next, w.deadline);
    const std::uint64_t seen = first_seq_ + events_.size();
    auto woken = [&] { return stopping_ || first_seq_ + events_.size() != seen; };
    if (next == std::chrono::steady_clock::time_point::max())
      changed_.wait(lock, [&] { return woken() || !waiters_.empty(); });
    else
      changed_.wait_until(lock, next, woken);
  }
}

}  // namespace lockstep::controller
