// A latency histogram for metrics (Prometheus' cumulative `le` buckets): fixed bucket bounds
// from 100 us to 60 s, counters kept in atomics so that recording takes no lock and a reader
// (a scrape) never stops a writer.
//
// Thread-safety: Record and Read may be called from any thread at once. A Read taken while
// others record may be off by the records in flight (each counter is exact on its own).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace lockstep {

class LatencyHistogram {
 public:
  // Upper bounds of the buckets, in seconds (the last, +Inf, is implicit).
  static constexpr std::array<double, 16> kBounds = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                     0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                                     1,      2.5,     10,     60};
  static constexpr std::size_t kBuckets = kBounds.size() + 1;  // with +Inf

  struct Reading {
    std::array<std::uint64_t, kBuckets> buckets{};  // per bucket, not cumulative
    std::uint64_t count = 0;
    double sum_seconds = 0;
  };

  void Record(std::chrono::nanoseconds latency);
  void RecordSeconds(double seconds);
  Reading Read() const;

 private:
  std::array<std::atomic<std::uint64_t>, kBuckets> buckets_{};
  std::atomic<std::uint64_t> count_{0};
  std::atomic<std::uint64_t> sum_ns_{0};
};

}  // namespace lockstep
