// What a simulation produced and how it is reported: the summary metrics of the field, one CSV
// row per job, and SVG charts a person can open.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/types.h"

namespace lockstep::sim {

// One simulated job. `units` is what utilization counts: GPUs on a GPU cluster, else CPUs.
struct JobRecord {
  JobId id = 0;
  std::string user;
  Time submit = 0;
  Time start = 0;
  Time end = 0;
  std::int32_t nodes = 0;
  std::int32_t gpus = 0;
  std::int32_t cpus = 0;
  std::int64_t units = 0;
  Seconds recorded_wait = -1;  // the production scheduler's wait, from the trace; -1 unknown
  bool killed_at_limit = false;
};

// The state of the cluster at one moment, sampled at every event time.
struct Sample {
  Time time = 0;
  std::int64_t busy_units = 0;
  std::int64_t queued_jobs = 0;
  std::int64_t running_jobs = 0;
};

// Nodes alike in CPUs and GPUs, and how many of them the modelled machine has.
struct NodeShapeCount {
  std::int64_t count = 0;
  std::int32_t cpus = 0;
  std::int32_t gpus = 0;
};

struct SimResult {
  std::vector<JobRecord> jobs;     // every job that ran, in id order
  std::vector<Sample> samples;     // in time order
  std::int64_t skipped = 0;        // trace records that could not run
  std::int64_t never_started = 0;  // jobs that can never run on this cluster
  std::int64_t capacity_units = 0;
  std::string unit_name;                    // "gpus" or "cpus"
  std::vector<NodeShapeCount> node_shapes;  // how the machine was modelled, in node order
  double scheduler_seconds = 0;             // wall time spent in Scheduler::Plan
  std::int64_t plan_calls = 0;
  std::string policy;  // "fcfs", "easy", "conservative"
};

struct Summary {
  std::int64_t jobs = 0;
  std::int64_t skipped = 0;
  double makespan_s = 0;    // last end - first submit
  double utilization = 0;   // sum(run x units) / (capacity x (last end - first start))
  double offered_load = 0;  // sum(run x units) / (capacity x (last submit - first submit))
  double mean_wait_s = 0, p50_wait_s = 0, p95_wait_s = 0, p99_wait_s = 0, max_wait_s = 0;
  double mean_bsld = 0;   // bounded slowdown, tau = 10 s
  double mean_jct_s = 0;  // mean of end - submit
  double scheduler_seconds = 0;
  // The production schedule recorded in the trace (its wait field), where the trace has one.
  bool has_recorded = false;
  double recorded_mean_wait_s = 0, recorded_p50_wait_s = 0, recorded_p95_wait_s = 0;
  double recorded_mean_bsld = 0;
};

Summary Summarize(const SimResult& result);
std::int64_t NodeCount(const std::vector<NodeShapeCount>& shapes);
// "1,152 nodes: 1,008 x 80 cpus + 144 x 88 cpus".
std::string DescribeMachine(const std::vector<NodeShapeCount>& shapes);
// A few human-readable lines.
std::string FormatSummary(const SimResult& result, const Summary& summary);
// One JSON object (the keys of Summary, plus policy, capacity and plan_calls).
std::string SummaryJson(const SimResult& result, const Summary& summary);
// id,user,submit,start,end,wait,nodes,gpus,cpus
Status WriteJobsCsv(const SimResult& result, const std::string& path);
// DIR/utilization.svg, DIR/queue.svg, DIR/wait_cdf.svg; creates DIR.
Status WritePlots(const SimResult& result, const std::string& dir);

// A one-line progress bar on stderr, drawn only when stderr is a terminal. Redraws only when
// progress moves by 0.5% or more, so calling Update for every job is cheap. Not thread-safe.
class ProgressBar {
 public:
  explicit ProgressBar(std::int64_t total);
  ~ProgressBar();  // finishes the line
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  void Update(std::int64_t done);

 private:
  std::int64_t total_;
  std::int64_t last_drawn_ = -1;  // the half-percent step last drawn; -1 before the first draw
  bool enabled_;
};

// The text ProgressBar draws (without the leading \r):
// "[=====>    ]  42%  84,123/202,876 jobs". Exposed so tests can check it without a terminal.
std::string ProgressLine(std::int64_t done, std::int64_t total);

}  // namespace lockstep::sim
