// Time as lockstepd and its backends read it: one interface, so that tests move time forward
// instead of sleeping (Envoy's TimeSource, Seastar's manual_clock). The engine never reads a
// clock; the controller, the agents' backend and the Kubernetes backend read this one.
#pragma once

#include <atomic>
#include <chrono>

#include "common/types.h"

namespace lockstep {

// Thread-safety: every method may be called from any thread.
class Clock {
 public:
  using Monotonic = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  // Wall-clock time, Unix seconds: what jobs' submit, start and end times are.
  virtual Time Now() const = 0;
  // For timeouts and ages (a node's last heartbeat); never goes back.
  virtual Monotonic MonotonicNow() const = 0;
};

// The system's clocks. A process-wide instance that lives forever.
Clock& SystemClock();

// A clock that moves only when told to (tests). Starts at `start` (Unix seconds).
class ManualClock : public Clock {
 public:
  explicit ManualClock(Time start = 1'700'000'000) : now_ms_(start * 1000) {}
  Time Now() const override { return now_ms_.load() / 1000; }
  Monotonic MonotonicNow() const override {
    return Monotonic(std::chrono::milliseconds(now_ms_.load()));
  }
  void Advance(std::chrono::milliseconds d) { now_ms_ += d.count(); }

 private:
  std::atomic<std::int64_t> now_ms_;
};

}  // namespace lockstep
