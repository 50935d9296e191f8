#include "backend/agent/job_hook_orders.h"

namespace lockstep::agent {
namespace {

// The batch environment's variables a prolog gets too (Slurm's prolog environment).
constexpr const char* kFromBatch[] = {
    "SLURM_JOB_ID",        "SLURM_JOBID",         "SLURM_JOB_USER",     "SLURM_JOB_UID",
    "SLURM_JOB_GID",       "SLURM_JOB_NODELIST",  "SLURM_JOB_NAME",     "SLURM_JOB_PARTITION",
    "SLURM_JOB_ACCOUNT",   "SLURM_JOB_QOS",       "SLURM_CLUSTER_NAME", "SLURM_JOB_NUM_NODES",
    "SLURM_RESTART_COUNT", "SLURM_ARRAY_JOB_ID",  "SLURM_ARRAY_TASK_ID", "SLURM_SUBMIT_DIR",
    "SLURM_JOB_START_TIME"};

std::string GpuIndexList(std::uint64_t bits) {
  std::string out;
  for (int i = 0; i < 64; ++i)
    if (bits >> i & 1) out += (out.empty() ? "" : ",") + std::to_string(i);
  return out;
}

void SetIdentity(std::map<std::string, std::string>& env, JobId job, std::int32_t run,
                 const std::string& user, std::uint32_t uid, std::uint32_t gid) {
  env.try_emplace("SLURM_JOB_ID", std::to_string(job));
  env.try_emplace("SLURM_JOBID", std::to_string(job));
  env.try_emplace("SLURM_JOB_USER", user);
  env.try_emplace("SLURM_JOB_UID", std::to_string(uid));
  env.try_emplace("SLURM_JOB_GID", std::to_string(gid));
  env.try_emplace("SLURM_RESTART_COUNT", std::to_string(run));
}

}  // namespace

RunHookEnv HookEnvOfLaunch(const backend::LaunchOrder& order) {
  RunHookEnv out;
  for (const char* key : kFromBatch)
    if (auto it = order.env.find(key); it != order.env.end()) out.common[key] = it->second;
  SetIdentity(out.common, order.job, order.run, order.user, order.uid, order.gid);
  out.common.try_emplace("SLURM_JOB_PARTITION", order.partition);
  out.common.try_emplace("SLURM_JOB_NAME", order.name);
  out.common["SLURM_JOB_WORK_DIR"] = order.work_dir;
  if (!out.common.count("SLURM_JOB_NODELIST")) {
    std::string nodes;
    for (const backend::PlacedNode& p : order.nodes) nodes += (nodes.empty() ? "" : ",") + p.node;
    out.common["SLURM_JOB_NODELIST"] = nodes;
  }
  for (const backend::PlacedNode& p : order.nodes)
    out.gpus_by_node[p.node] = GpuIndexList(p.gpus);
  return out;
}

RunHookEnv HookEnvOfStep(const backend::StepLaunch& step) {
  RunHookEnv out;
  SetIdentity(out.common, step.job, step.run, step.user, step.uid, step.gid);
  std::string nodes;
  for (const auto& [node, tasks] : step.tasks_by_node) nodes += (nodes.empty() ? "" : ",") + node;
  out.common["SLURM_JOB_NODELIST"] = nodes;
  out.common["SLURM_JOB_WORK_DIR"] = step.cwd;
  return out;
}

nlohmann::json HookOrder(const JobHookSettings& hook, const RunHookEnv& env,
                         const std::string& node) {
  std::map<std::string, std::string> vars = env.common;
  if (auto g = env.gpus_by_node.find(node); g != env.gpus_by_node.end() && !g->second.empty())
    vars["SLURM_JOB_GPUS"] = g->second;
  vars["SLURMD_NODENAME"] = node;
  vars["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  return {{"program", hook.program}, {"timeout_s", hook.timeout}, {"env", vars}};
}

}  // namespace lockstep::agent
