#include "controller/lock_stats.h"

#include <bit>

namespace lockstep::controller {

void LockHoldStats::Record(std::chrono::steady_clock::duration held) {
  const auto ns = static_cast<std::uint64_t>(
      std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::nanoseconds>(held).count()));
  const std::uint64_t us = ns / 1000;
  const int bucket = std::min(kBuckets - 1, static_cast<int>(std::bit_width(us)));
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  total_ns_.fetch_add(ns, std::memory_order_relaxed);
  std::uint64_t max = max_ns_.load(std::memory_order_relaxed);
  while (ns > max && !max_ns_.compare_exchange_weak(max, ns, std::memory_order_relaxed)) {
  }
}

nlohmann::json LockHoldStats::ToJson() const {
  std::array<std::uint64_t, kBuckets> counts{};
  std::uint64_t n = 0;
  for (int b = 0; b < kBuckets; ++b) n += counts[b] = buckets_[b].load(std::memory_order_relaxed);
  auto percentile = [&](double p) -> std::uint64_t {
    if (n == 0) return 0;
    const auto want = static_cast<std::uint64_t>(p * static_cast<double>(n - 1)) + 1;
    std::uint64_t seen = 0;
    for (int b = 0; b < kBuckets; ++b)
      if ((seen += counts[b]) >= want) return std::uint64_t{1} << b;
    return std::uint64_t{1} << (kBuckets - 1);
  };
  const std::uint64_t total = total_ns_.load(std::memory_order_relaxed);
  return {{"count", n},
          {"mean_us", n == 0 ? 0.0 : static_cast<double>(total) / 1000.0 / static_cast<double>(n)},
          {"max_us", static_cast<double>(max_ns_.load(std::memory_order_relaxed)) / 1000.0},
          {"p50_us", percentile(0.50)},
          {"p99_us", percentile(0.99)},
          {"p999_us", percentile(0.999)}};
}

}  // namespace lockstep::controller
