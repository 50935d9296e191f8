// From trace records to engine Jobs on a given cluster (internal to the simulator).
#pragma once

#include "common/status.h"
#include "engine/model.h"
#include "config/cluster_config.h"
#include "trace/trace.h"

namespace lockstep::sim {

struct SimJob {
  engine::Job job;
  Seconds run_time = 0;  // what it ran in the trace
  Seconds recorded_wait = -1;
  std::string user;
};

// A job as the engine sees it. CPU-only traces (SWF) ask for `procs` tasks of one CPU spread
// over as few nodes as hold them; GPU traces ask for nodes x GPUs per node. A job without a
// time limit gets its run time as its limit (a perfect estimate).
SimJob ToSimJob(const trace::TraceJob& t, config::ClusterConfig& cluster);

// What utilization counts per job: GPUs on a cluster with GPUs, else CPUs.
std::int64_t UnitsOf(const engine::Job& job, const engine::Allocation& a, bool gpu_cluster);

}  // namespace lockstep::sim
