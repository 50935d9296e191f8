// How long the controller's lock is held: a histogram of hold times in power-of-two
// microsecond buckets, recorded without a lock, read by GET /api/v1/diag (docs/api.md).
// Thread-safety: Record and ToJson may be called from any thread at once.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>

namespace lockstep::controller {

class LockHoldStats {
 public:
  void Record(std::chrono::steady_clock::duration held);
  // {"count", "mean_us", "max_us", "p50_us", "p99_us", "p999_us"}: percentiles are the upper
  // bound of the bucket they fall in (1, 2, 4, ... microseconds).
  nlohmann::json ToJson() const;

 private:
  static constexpr int kBuckets = 40;
  std::array<std::atomic<std::uint64_t>, kBuckets> buckets_{};  // bucket b: < 2^b us
  std::atomic<std::uint64_t> count_{0};
  std::atomic<std::uint64_t> total_ns_{0};
  std::atomic<std::uint64_t> max_ns_{0};
};

// Records, when it goes, how long it lived: declared right after a lock is taken, it is
// destroyed right before the lock is released.
class HeldSpan {
 public:
  explicit HeldSpan(LockHoldStats& stats)
      : stats_(stats), since_(std::chrono::steady_clock::now()) {}
  ~HeldSpan() { stats_.Record(std::chrono::steady_clock::now() - since_); }
  HeldSpan(const HeldSpan&) = delete;
  HeldSpan& operator=(const HeldSpan&) = delete;

 private:
  LockHoldStats& stats_;
  std::chrono::steady_clock::time_point since_;
};

}  // namespace lockstep::controller
