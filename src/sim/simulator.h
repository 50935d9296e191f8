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
  // Reservations held on the cluster during the replay, each as scontrol create reservation's
  // words ("StartTime=now+1hour Duration=120 Nodes=n[1-2] Flags=MAINT Users=root"); "now" is
  // the trace's first submission. No trace job asks for one: they are windows the jobs keep out
  // of (maintenance, dedicated capacity).
  std::vector<std::vector<std::string>> reservations;
};

// Replays `trace` on `cluster`. Jobs the cluster can never run (too big, over a limit) are
// counted in never_started and left out of the metrics.
Result<SimResult> Simulate(const trace::Trace& trace, config::ClusterConfig cluster,
                           const SimOptions& options);

// A cluster for a trace that names its own machine: the SWF header's size, or the Alibaba node
// list. An error when the trace says nothing about its cluster.
Result<config::ClusterConfig> ClusterFromTrace(const trace::Trace& trace);

}  // namespace lockstep::sim
