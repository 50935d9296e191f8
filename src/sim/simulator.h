// The trace simulator: replays a workload in virtual time through the engine's Scheduler (whose
// plans equal plan()'s, the code the controller calls) and its job lifecycle. A job ends after
// its recorded run time, or is killed at its time limit. Preempted jobs go back to the queue
// (REQUEUE) or end (CANCEL) at once: the replay does not model grace times.
//
// Single-threaded; a Simulator is used once.
#pragma once

#include <ostream>
#include <string>

#include "sim/report.h"
#include "common/status.h"
#include "engine/model.h"
#include "config/cluster_config.h"
#include "trace/trace.h"

namespace lockstep::sim {

struct SimOptions {
  engine::PolicyOptions policy;
  std::string policy_name = "easy";
  Seconds fairshare_half_life = 7 * 24 * 3600;
  bool progress = false;              // a progress bar on a terminal
  std::ostream* event_log = nullptr;  // one line per start, end and preemption (golden tests)
};

// Replays `trace` on `cluster`. Jobs the cluster can never run (too big, over a limit) are
// counted in never_started and left out of the metrics.
Result<SimResult> Simulate(const trace::Trace& trace, config::ClusterConfig cluster,
                           const SimOptions& options);

// A cluster for a trace that names its own machine: the SWF header's size, or the Alibaba node
// list. An error when the trace says nothing about its cluster.
Result<config::ClusterConfig> ClusterFromTrace(const trace::Trace& trace);

}  // namespace lockstep::sim
