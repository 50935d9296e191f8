// From trace records to engine Jobs on a given cluster (internal to the simulator).
#pragma once

#include <string_view>

#include "common/status.h"
#include "engine/model.h"
#include "config/cluster_config.h"
#include "trace/trace.h"

namespace lockstep::sim {

// The association a trace job is charged to (its user, "user" when the trace has none, and its
// account), added to the cluster when new. The replay resolves every job's before it makes the
// scheduler, which starts from the final list.
std::uint32_t AssociationOf(const trace::TraceJob& t, config::ClusterConfig& cluster);

// A job as the engine sees it, charged to `assoc`. CPU-only traces (SWF) ask for `procs` tasks
// of one CPU spread over as few nodes as hold them; GPU traces ask for nodes x GPUs per node. A
// job without a time limit gets its run time as its limit (a perfect estimate).
engine::Job ToEngineJob(const trace::TraceJob& t, const config::ClusterConfig& cluster,
                        std::uint32_t assoc);

// What the job ran in the trace (never negative).
inline Seconds RunTimeOf(const trace::TraceJob& t) {
  return t.run_time > 0 ? t.run_time : 0;
}

// The user its records name: "user" when the trace gives none.
inline std::string_view UserOf(const trace::TraceJob& t) {
  return t.user.empty() ? std::string_view("user") : std::string_view(t.user);
}

// What utilization counts per job: GPUs on a cluster with GPUs, else CPUs.
std::int64_t UnitsOf(const engine::Job& job, const engine::Allocation& a, bool gpu_cluster);

}  // namespace lockstep::sim
