// scontrol show config: lockstepd's settings under Slurm's names (slurm.conf's), as
// GET /api/v1/config answers them (docs/api.md). Only what lockstepd has a setting or a fact
// for: the CLI fills Slurm's other keys with Slurm's defaults (cli/format/scontrol_config.h).
#include <pwd.h>
#include <unistd.h>

#include <cstdio>

#include "common/duration.h"
#include "controller/controller.h"

namespace lockstep::controller {
namespace {

std::string Sec(Seconds s) {
  return std::to_string(s) + " sec";
}

std::string OrNull(const std::string& s) {
  return s.empty() ? "(null)" : s;
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

// SlurmctldHost[0]: the host lockstepd runs on.
std::string ThisHost() {
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  return host;
}

// SlurmUser: "name(uid)" of the user lockstepd runs as (Slurm's "root(0)").
std::string ThisUser() {
  const uid_t uid = ::geteuid();
  struct passwd pw {};
  struct passwd* found = nullptr;
  char buf[4096];
  const bool named = ::getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found != nullptr;
  return (named ? std::string(pw.pw_name) : std::to_string(uid)) + "(" + std::to_string(uid) + ")";
}

// The scheduler's settings: SchedulerType, SchedulerParameters, PreemptType, TopologyPlugin.
void AddSchedulerKeys(const config::ClusterConfig& c, nlohmann::json& out) {
  const engine::PolicyOptions& p = c.policy;
  std::string parameters = "reservation_depth=" + std::to_string(p.reservation_depth);
  if (p.max_jobs_tested > 0) parameters += ",bf_max_job_test=" + std::to_string(p.max_jobs_tested);
  if (p.max_reservation_rounds > 0)
    parameters += ",max_reservation_rounds=" + std::to_string(p.max_reservation_rounds);
  parameters += ",max_script_size=" + std::to_string(c.submit_limits.max_script_size);
  parameters += ",max_switch_wait=" + std::to_string(c.max_switch_wait);
  out["SchedulerType"] = p.reservation_depth == 0 ? "sched/builtin" : "sched/backfill";
  out["SchedulerParameters"] = parameters;
  // kill_invalid_depend moved from SchedulerParameters to DependencyParameters in Slurm 20.02.
  out["DependencyParameters"] = c.kill_invalid_depend ? "kill_invalid_depend" : "(null)";
  out["PreemptType"] = p.preempt == engine::PreemptType::kQos ? "preempt/qos"
                       : p.preempt == engine::PreemptType::kPartitionPriority
                           ? "preempt/partition_prio"
                           : "preempt/none";
  out["TopologyPlugin"] = !c.base.blocks.empty()     ? "topology/block"
                          : !c.base.switches.empty() ? "topology/tree"
                                                     : "topology/none";
  out["LockstepPlacement"] =
      p.placement == engine::PlacementPolicy::kTopologyFirst ? "topology_first" : "best_fit";
}

void AddPriorityKeys(const config::ClusterConfig& c, nlohmann::json& out) {
  const engine::PolicyOptions& p = c.policy;
  const engine::PriorityWeights& w = p.weights;
  out["PriorityType"] = "priority/multifactor";
  out["PriorityWeightAge"] = std::to_string(w.age);
  out["PriorityWeightFairShare"] = std::to_string(w.fairshare);
  out["PriorityWeightJobSize"] = std::to_string(w.job_size);
  out["PriorityWeightPartition"] = std::to_string(w.partition);
  out["PriorityWeightQOS"] = std::to_string(w.qos);
  out["PriorityWeightTRES"] = PriorityWeightTres(w);
  out["PriorityMaxAge"] = FormatSlurmSpan(w.max_age);
  out["PriorityFavorSmall"] = w.favor_small ? "Yes" : "No";
  out["PriorityDecayHalfLife"] = FormatSlurmSpan(c.fairshare_half_life);
  out["PriorityCalcPeriod"] = FormatSlurmSpan(p.priority_calc_period);
}

// What a user may submit (docs/security.md); lockstep's own keys where Slurm has none.
void AddLimitKeys(const config::ClusterConfig& c, nlohmann::json& out) {
  const config::SubmitLimits& l = c.submit_limits;
  out["AccountingStorageEnforce"] = l.enforce_associations ? "associations" : "none";
  out["EnforcePartLimits"] = l.enforce_part_limits ? "ALL" : "NO";
  out["MaxJobCount"] = std::to_string(l.max_job_count);
  out["MaxArraySize"] = std::to_string(c.max_array_size);
  out["MaxSubmitJobs"] =
      l.max_submit_jobs == kUnlimited ? "UNLIMITED" : std::to_string(l.max_submit_jobs);
  out["LockstepMaxNameLength"] = std::to_string(l.max_name_length);
  out["LockstepMaxEnvSize"] = std::to_string(l.max_env_size);
}

// What the agents run on the nodes: the health checks, the prolog and the epilog.
void AddNodeProgramKeys(const config::ClusterConfig& c, nlohmann::json& out) {
  std::string states;
  for (const std::string& s : c.health.node_states) states += (states.empty() ? "" : ",") + s;
  out["HealthCheckProgram"] = OrNull(c.health.program);
  out["HealthCheckInterval"] = Sec(c.health.interval);
  out["HealthCheckNodeState"] = states.empty() ? "ANY" : states;
  out["Prolog"] = OrNull(c.job_hooks.prolog.program);
  out["Epilog"] = OrNull(c.job_hooks.epilog.program);
  // Slurm has one timeout for both; lockstep one each: the prolog's when it has one.
  const config::JobHook& timed =
      c.job_hooks.prolog.configured() ? c.job_hooks.prolog : c.job_hooks.epilog;
  if (timed.configured()) out["PrologEpilogTimeout"] = std::to_string(timed.timeout);
}

// What lockstep always is: GPUs are its one GRES and are accounted; CPUs and memory are
// consumable; its accounting keeps gres/gpu beside Slurm's default TRES.
void AddResourceKeys(const config::ClusterConfig& c, nlohmann::json& out) {
  out["SelectType"] = "select/cons_tres";
  out["SelectTypeParameters"] = "CR_CPU_MEMORY";
  out["GresTypes"] = "gpu";
  out["AccountingStorageTRES"] = "cpu,mem,energy,node,billing,fs/disk,vmem,pages,gres/gpu";
  out["MaxNodeCount"] = std::to_string(c.base.nodes.size());
  out["LockstepBackend"] = c.backend;
}

}  // namespace

nlohmann::json Controller::ConfigView() const {
  // Looked up before the lock: the user database may be a network service.
  nlohmann::json out = {
      {"SlurmctldHost[0]", ThisHost()}, {"SlurmUser", ThisUser()}, {"BOOT_TIME", stats_.since()}};
  HeldLock lock(*this);
  out["ClusterName"] = "lockstep";
  out["SLURM_CONF"] = options_.cluster_config;
  out["StateSaveLocation"] = options_.state_dir;
  out["KillWait"] = Sec(options_.kill_wait);
  out["MinJobAge"] = Sec(cluster_.policy.min_job_age);
  out["NEXT_JOB_ID"] = std::to_string(next_job_id_);
  out["LockstepStorage"] = StorageSummaryLocked();
  AddSchedulerKeys(cluster_, out);
  AddPriorityKeys(cluster_, out);
  AddLimitKeys(cluster_, out);
  AddNodeProgramKeys(cluster_, out);
  AddResourceKeys(cluster_, out);
  return out;
}

}  // namespace lockstep::controller
