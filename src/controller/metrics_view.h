// What a metrics scrape reads from the controller (Controller::Metrics): plain values copied
// under its lock, rendered as Prometheus text off it (metrics_text.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/latency_histogram.h"
#include "common/types.h"
#include "controller/health_metrics.h"
#include "controller/job_tally.h"
#include "controller/sched_stats.h"

namespace lockstep::controller {

struct NodeMetrics {
  std::string name;
  std::int32_t cpus = 0;
  std::int64_t mem_mb = 0;
  std::int32_t gpus = 0;
  NodeUse use;
  bool drain = false;       // an operator's drain, or the backend's cordon
  bool down = false;        // an operator's DOWN
  bool responding = false;  // its backend says it is ready
};

struct PartitionMetrics {
  std::string name;
  std::vector<std::uint32_t> nodes;  // indexes into MetricsView::nodes
};

// An agent and how long ago it was last heard of (lockstepd fills it from the agents' backend).
struct AgentHeartbeat {
  std::string agent;
  double age_seconds = 0;
};

struct MetricsView {
  Time now = 0;
  std::vector<NodeMetrics> nodes;
  std::vector<PartitionMetrics> partitions;
  std::vector<JobGroup> groups;  // jobs by (partition, user, account)
  StatsReading stats;
  LatencyHistogram::Reading store_commit;
  std::vector<AgentHeartbeat> heartbeats;
  std::vector<NodeHealthMetrics> health;  // the nodes whose health checks have reported
};

}  // namespace lockstep::controller
