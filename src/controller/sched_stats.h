// The scheduler's and the API's statistics since lockstepd started, as sdiag prints them and
// /metrics/scheduler serves them: scheduling cycles (the quick pass on events is Slurm's main
// scheduler, the full periodic pass its backfill cycle), jobs submitted, started and ended,
// queue waits, and RPCs by type and by user, with latency histograms.
//
// Thread-safety: every method may be called from any thread; a small mutex of its own guards
// the counters (never held while the controller's is taken), histograms are lock-free.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/latency_histogram.h"
#include "common/types.h"

namespace lockstep::controller {

// One kind of scheduling cycle (sdiag's "Main schedule" or "Backfilling" block).
struct CycleStats {
  std::uint64_t cycles = 0;
  std::uint64_t last_us = 0, max_us = 0, total_us = 0;
  std::uint64_t last_depth = 0, total_depth = 0;          // jobs the pass looked at
  std::uint64_t last_queue_len = 0, total_queue_len = 0;  // pending jobs at the pass
  std::uint64_t started = 0, backfilled = 0;              // jobs the passes started
  std::uint64_t last_backfilled = 0;
  Time last_when = 0;
};

struct RpcStat {
  std::uint64_t count = 0;
  std::uint64_t total_us = 0;
  std::uint32_t id = 0;  // types: in order of first use; users: the uid
};

struct StatsReading {
  Time since = 0;  // when lockstepd started
  CycleStats main, backfill;
  std::uint64_t jobs_submitted = 0, jobs_started = 0, jobs_completed = 0, jobs_canceled = 0,
                jobs_failed = 0;
  std::map<std::string, RpcStat> rpc_by_type;  // by route ("GET /api/v1/jobs")
  std::map<std::string, RpcStat> rpc_by_user;  // by user name
  LatencyHistogram::Reading pass_latency[2];   // [0] quick passes, [1] full ones
  // Queue waits (submit to start) by partition and GPU class ("0", "1", "2", "4", ... "64+").
  std::map<std::pair<std::string, std::string>, LatencyHistogram::Reading> queue_wait;
  std::map<std::string, LatencyHistogram::Reading> api_latency;  // by route
  std::map<std::string, std::uint64_t> failures_by_cause;          // runs that did not complete
};

class SchedStats {
 public:
  explicit SchedStats(Time started) : since_(started) {}

  // One scheduling pass: `full` is the periodic pass that says why each job pends.
  void RecordPass(bool full, std::chrono::nanoseconds took, std::uint64_t depth,
                  std::uint64_t queue_len, std::uint64_t started, std::uint64_t backfilled,
                  Time now);
  void RecordSubmitted(std::uint64_t jobs);
  // A job started after waiting `waited` seconds in `partition`, holding `gpus` GPUs.
  void RecordStarted(const std::string& partition, std::int64_t gpus, Seconds waited);
  // A job ended: completed, cancelled, or failed (any other end, as sdiag counts them).
  enum class End { kCompleted, kCanceled, kFailed };
  void RecordEnded(End how);
  // A run did not complete, for `cause` (docs/health.md: user, oom, timeout, node, gpu, ...).
  void RecordFailure(const std::string& cause);
  // One API request: its route ("GET /api/v1/jobs/{id}"), its caller, how long it took.
  void RecordRpc(const std::string& route, const std::string& user, std::uint32_t uid,
                 std::chrono::nanoseconds took);

  StatsReading Read() const;
  // When lockstepd started (scontrol show config's BOOT_TIME).
  Time since() const { return since_; }

  // The GPU class of a job holding `gpus` GPUs: 0, 1, 2, then powers of two ("64+" beyond).
  static std::string GpuClass(std::int64_t gpus);

 private:
  LatencyHistogram& Histogram(std::map<std::string, std::unique_ptr<LatencyHistogram>>& m,
                              const std::string& key);

  const Time since_;
  LatencyHistogram pass_latency_[2];  // [0] quick passes, [1] full ones
  mutable std::mutex mu_;
  CycleStats main_, backfill_;  // guarded by mu_
  std::uint64_t submitted_ = 0, started_ = 0, completed_ = 0, canceled_ = 0, failed_ = 0;  // mu_
  std::map<std::string, RpcStat> rpc_by_type_, rpc_by_user_;  // guarded by mu_
  std::map<std::string, std::uint64_t> failures_by_cause_;    // guarded by mu_
  // guarded by mu_ (the map; each histogram records without it)
  std::map<std::pair<std::string, std::string>, std::unique_ptr<LatencyHistogram>> queue_wait_;
  std::map<std::string, std::unique_ptr<LatencyHistogram>> api_latency_;  // guarded by mu_
};

// The route of a request's path for statistics: ids become {id}, so that RPC types stay few
// ("/api/v1/jobs/42/cancel" -> "/api/v1/jobs/{id}/cancel"); an unknown path is "other".
std::string RouteOf(const std::string& method, std::string_view path);

}  // namespace lockstep::controller
