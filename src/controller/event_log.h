// The event stream (`lockstep events`, GET /api/v1/events): job and node changes as JSON
// objects, in a bounded in-memory log. Each event has a sequence number, one more than the
// event before; a reader asks for the events after the last one it saw, and is told when the
// log has dropped some it never read (the oldest go first once `capacity` is reached), as a
// Kubernetes watch from a compacted resourceVersion is told "410 Gone".
//
// Events are kept as their JSON text, parsed again for a reader: a parsed object takes about
// five times the memory, and readers are few while every job change appends.
//
// Thread-safety: every method may be called from any thread. A mutex of its own guards the log;
// the controller appends under its own lock (the order of events is the order of changes), so
// the log's mutex is taken after the controller's, never the other way round. Readers' `done`
// is called without the log's mutex, from the caller's thread or the log's timer thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

namespace lockstep::controller {

struct EventBatch {
  std::vector<nlohmann::json> events;  // each with its "seq"
  std::uint64_t next = 0;              // where to read from next (the last seq given + 1)
  std::uint64_t dropped = 0;           // events after `after` already gone from the log
};

class EventLog {
 public:
  explicit EventLog(std::size_t capacity);
  ~EventLog();  // answers every waiting reader
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  // Adds `event` (an object) with the next "seq". Returns the seq.
  std::uint64_t Append(nlohmann::json event);

  // The events with seq >= `from` (at most `max`), through `done`: at once when there are some
  // or `wait` is 0, else when one comes or `wait` ends (with none). `from` 0 means "from the
  // oldest kept"; a `from` past the end waits for the next. `keep` filters what a reader may
  // see (users see other users' job events without their details: the filter edits them).
  using Done = std::function<void(EventBatch)>;
  using Filter = std::function<bool(nlohmann::json&)>;
  void Read(std::uint64_t from, std::size_t max, std::chrono::milliseconds wait, Filter keep,
            Done done);

  std::uint64_t next_seq() const;

 private:
  struct Waiter {
    std::uint64_t from;
    std::size_t max;
    Filter keep;
    Done done;
    std::chrono::steady_clock::time_point deadline;
  };
  EventBatch TakeLocked(std::uint64_t from, std::size_t max, const Filter& keep) const;
  void TimerLoop();

  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::deque<std::string> events_;  // guarded by mu_; events_[i] has seq first_seq_ + i
  std::uint64_t first_seq_ = 1;        // guarded by mu_
  std::vector<Waiter> waiters_;        // guarded by mu_
  bool stopping_ = false;              // guarded by mu_
  std::condition_variable changed_;
  std::thread timer_;
};

}  // namespace lockstep::controller
