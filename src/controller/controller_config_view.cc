// scontrol show config: lockstepd's settings under Slurm's names (slurm.conf's), as
// GET /api/v1/config answers them (docs/api.md).
#include <cstdio>

#include "common/duration.h"
#include "controller/controller.h"

namespace lockstep::controller {
namespace {

// slurm.conf's spelling of a duration in `scontrol show config`: "7-00:00:00", "00:05:00".
std::string Span(Seconds s) {
  char buf[48];
  if (s >= 86400)
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", static_cast<long long>(s / 86400),
                  static_cast<long long>(s / 3600 % 24), static_cast<long long>(s / 60 % 60),
                  static_cast<long long>(s % 60));
  else
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  return buf;
}

std::string PriorityWeightTres(const engine::PriorityWeights& w) {
  std::string out;
  auto add = [&](const char* name, std::uint32_t v) {
    if (v == 0) return;
    out += (out.empty() ? "" : ",") + std::string(name) + "=" + std::to_string(v);
  };
  add("CPU", w.tres_cpu);
  add("Mem", w.tres_mem);
  add("GRES/gpu", w.tres_gpu);
  return out.empty() ? "(null)" : out;
}

}  // namespace

nlohmann::json Controller::ConfigView() const {
  HeldLock lock(*this);
  const engine::PolicyOptions& p = cluster_.policy;
  const engine::PriorityWeights& w = p.weights;
  std::string scheduler_parameters = "reservation_depth=" + std::to_string(p.reservation_depth);
  if (p.max_jobs_tested > 0) scheduler_parameters += ",bf_max_job_test=" + std::to_string(p.max_jobs_tested);
  if (p.max_reservation_rounds > 0)
    scheduler_parameters += ",max_reservation_rounds=" + std::to_string(p.max_reservation_rounds);
  const config::SubmitLimits& l = cluster_.submit_limits;
  scheduler_parameters += ",max_script_size=" + std::to_string(l.max_script_size);
  scheduler_parameters += ",max_switch_wait=" + std::to_string(cluster_.max_switch_wait);
  const char* preempt = p.preempt == engine::PreemptType::kQos                 ? "preempt/qos"
                        : p.preempt == engine::PreemptType::kPartitionPriority ? "preempt/partition_prio"
                                                                              : "preempt/none";
  const char* topology = !cluster_.base.blocks.empty()     ? "topology/block"
                         : !cluster_.base.switches.empty() ? "topology/tree"
                                                           : "topology/none";
  return {
      {"ClusterName", "lockstep"},
      {"SLURM_CONF", options_.cluster_config},
      {"StateSaveLocation", options_.state_dir},
      {"KillWait", std::to_string(options_.kill_wait) + " sec"},
      {"MinJobAge", std::to_string(p.min_job_age) + " sec"},
      {"SchedulerType", p.reservation_depth == 0 ? "sched/builtin" : "sched/backfill"},
      {"SchedulerParameters", scheduler_parameters},
      {"SelectType", "select/cons_tres"},
      {"LockstepPlacement",
       p.placement == engine::PlacementPolicy::kTopologyFirst ? "topology_first" : "best_fit"},
      {"PriorityType", "priority/multifactor"},
      {"PriorityWeightAge", std::to_string(w.age)},
      {"PriorityWeightFairShare", std::to_string(w.fairshare)},
      {"PriorityWeightJobSize", std::to_string(w.job_size)},
      {"PriorityWeightPartition", std::to_string(w.partition)},
      {"PriorityWeightQOS", std::to_string(w.qos)},
      {"PriorityWeightTRES", PriorityWeightTres(w)},
      {"PriorityMaxAge", Span(w.max_age)},
      {"PriorityFavorSmall", w.favor_small ? "Yes" : "No"},
      {"PriorityDecayHalfLife", Span(cluster_.fairshare_half_life)},
      {"PriorityCalcPeriod", Span(p.priority_calc_period)},
      {"PreemptType", preempt},
      {"TopologyPlugin", topology},
      {"LockstepBackend", cluster_.backend},
      {"LockstepStorage", StorageSummaryLocked()},
      // What a user may submit (docs/security.md); lockstep's own keys where Slurm has none.
      {"AccountingStorageEnforce", l.enforce_associations ? "associations" : "none"},
      {"EnforcePartLimits", l.enforce_part_limits ? "ALL" : "NO"},
      {"MaxJobCount", std::to_string(l.max_job_count)},
      {"MaxArraySize", std::to_string(cluster_.max_array_size)},
      {"MaxSubmitJobs",
       l.max_submit_jobs == kUnlimited ? "UNLIMITED" : std::to_string(l.max_submit_jobs)},
      {"LockstepMaxNameLength", std::to_string(l.max_name_length)},
      {"LockstepMaxEnvSize", std::to_string(l.max_env_size)},
  };
}

}  // namespace lockstep::controller
