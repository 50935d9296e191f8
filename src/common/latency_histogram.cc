#include "common/latency_histogram.h"

#include <algorithm>

namespace lockstep {

void LatencyHistogram::Record(std::chrono::nanoseconds latency) {
  RecordSeconds(std::chrono::duration<double>(latency).count());
}

void LatencyHistogram::RecordSeconds(double seconds) {
  if (seconds < 0) seconds = 0;
  const std::size_t b = std::lower_bound(kBounds.begin(), kBounds.end(), seconds) - kBounds.begin();
  buckets_[b].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<std::uint64_t>(seconds * 1e9), std::memory_order_relaxed);
}

LatencyHistogram::Reading LatencyHistogram::Read() const {
  Reading r;
  for (std::size_t b = 0; b < kBuckets; ++b) {
    r.buckets[b] = buckets_[b].load(std::memory_order_relaxed);
    r.count += r.buckets[b];  // the buckets' sum, so that +Inf always equals _count
  }
  r.sum_seconds = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
  return r;
}

}  // namespace lockstep
