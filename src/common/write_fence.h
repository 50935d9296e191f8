// A deadline on the right to write durable state: the leader election opens it up to a point
// in monotonic time with every renewal of its lease, and the store checks it before each
// transaction. A replica that can no longer renew therefore stops writing at that deadline,
// even while its renewal request still hangs, and before the lease can pass to another replica
// (the deadline is the renew deadline, shorter than the lease duration the others wait; see
// docs/kubernetes.md, "The state store on a shared volume").
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "common/clock.h"

namespace lockstep {

// Closed until the first Extend. Thread-safety: every method may be called from any thread.
// Does not own `clock`, which must outlive it.
class WriteFence {
 public:
  explicit WriteFence(const Clock* clock = &SystemClock()) : clock_(clock) {}

  // Writes are allowed until `until` (monotonic, the fence's clock). Never moves the deadline
  // back: a late renewal's answer cannot shorten a later one's.
  void Extend(Clock::Monotonic until) {
    const std::int64_t ns = Ns(until);
    std::int64_t current = until_ns_.load();
    while (ns > current && !until_ns_.compare_exchange_weak(current, ns)) {
    }
  }
  // Writes are refused from now on, whatever Extend says later.
  void Close() { closed_.store(true); }
  bool IsOpen() const { return !closed_.load() && Ns(clock_->MonotonicNow()) < until_ns_.load(); }
  Clock::Monotonic deadline() const {
    return Clock::Monotonic(std::chrono::nanoseconds(until_ns_.load()));
  }
  const Clock& clock() const { return *clock_; }

 private:
  static std::int64_t Ns(Clock::Monotonic t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  }

  const Clock* clock_;
  std::atomic<std::int64_t> until_ns_{0};
  std::atomic<bool> closed_{false};
};

}  // namespace lockstep
