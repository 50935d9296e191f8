// Job steps: `srun` inside an allocation starts tasks across the job's nodes, with each task's
// rank, local rank and GPUs in its environment.
#include <algorithm>

#include "controller/controller.h"
#include "controller/controller_internal.h"
#include "controller/job_env.h"

namespace lockstep::controller {

Result<nlohmann::json> Controller::CreateStep(const Caller& caller, JobId id,
                                              const nlohmann::json& req) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<JobEntry*> found = FindLocked(id);
  if (!found.ok()) return found.status();
  JobEntry& job = **found;
  LOCKSTEP_RETURN_IF_ERROR(CheckOwner(caller, job));
  if (job.state != JobState::kRunning)
    return FailedPrecondition("job " + job.DisplayId() + " is not running");
  if (!req.contains("argv") || !req["argv"].is_array() || req["argv"].empty())
    return InvalidArgument("step: 'argv' must be a non-empty array");
  JobEnvInput in = EnvInputLocked(job);
  int node_count = std::clamp(req.value("nodes", 0), 0, static_cast<int>(in.nodes.size()));
  if (node_count == 0) node_count = static_cast<int>(in.nodes.size());
  int per_node = req.value("ntasks_per_node", 0);
  int ntasks = req.value("ntasks", 0);
  if (ntasks <= 0)
    ntasks =
        per_node > 0 ? per_node * node_count : std::min(in.ntasks, std::max(in.ntasks, node_count));
  if (ntasks < node_count) node_count = ntasks;
  int gpus_per_task = req.value("gpus_per_task", 0);
  StepTask t;
  t.step_id = job.next_step_id++;
  t.step_tasks = ntasks;
  for (int i = 0; i < node_count; ++i) {
    t.step_nodes.push_back(in.nodes[i]);
    t.step_tasks_per_node.push_back(
        per_node > 0 ? per_node : ntasks / node_count + (i < ntasks % node_count ? 1 : 0));
  }
  auto step = std::make_unique<StepInfo>();
  step->job = id;
  step->step = t.step_id;
  step->name = req["argv"][0].get<std::string>();
  step->nodes = t.step_nodes;
  step->ntasks = ntasks;
  step->start_time = WallNow();
  std::map<std::string, std::string> base = req.value("env", std::map<std::string, std::string>{});
  std::string out = req.value("stdout", ""), err = req.value("stderr", "");
  int rank = 0;
  for (int i = 0; i < node_count; ++i) {
    nlohmann::json tasks = nlohmann::json::array();
    const std::vector<int>& node_gpus = in.gpus_per_node[i];
    for (int local = 0; local < t.step_tasks_per_node[i]; ++local, ++rank) {
      t.rank = rank, t.node_index = i, t.local_rank = local;
      t.gpus = node_gpus;
      if (gpus_per_task > 0) {
        t.gpus.clear();
        for (int g = local * gpus_per_task;
             g < (local + 1) * gpus_per_task && g < static_cast<int>(node_gpus.size()); ++g)
          t.gpus.push_back(node_gpus[g]);
      }
      tasks.push_back({{"argv", req["argv"]},
                       {"env", StepTaskEnvironment(in, t, base)},
                       {"stdout", out},
                       {"stderr", err.empty() ? out : err},
                       {"append", true}});
    }
    step->nodes_running.insert(in.nodes[i]);
    SendLocked(in.nodes[i], {{"type", "launch"},
                             {"job_id", id},
                             {"step", "step"},
                             {"step_id", t.step_id},
                             {"uid", job.uid},
                             {"gid", job.gid},
                             {"user", job.user},
                             {"cwd", req.value("cwd", job.spec.work_dir)},
                             {"tasks", std::move(tasks)},
                             {"memory_limit_mb", 0},
                             {"cpus", 0}});
  }
  nlohmann::json answer = {
      {"job_id", id}, {"step_id", t.step_id}, {"nodes", t.step_nodes}, {"ntasks", ntasks}};
  steps_[{id, t.step_id}] = std::move(step);
  (void)PersistLocked({&job});
  return answer;
}

Result<nlohmann::json> Controller::ShowStep(JobId id, std::int32_t step) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = steps_.find({id, step});
  if (it == steps_.end())
    return NotFound("no step " + std::to_string(id) + "." + std::to_string(step));
  const StepInfo& s = *it->second;
  return nlohmann::json{{"job_id", id},
                        {"step_id", step},
                        {"state", s.state},
                        {"exit_code", s.exit_code},
                        {"signal", s.signal}};
}

}  // namespace lockstep::controller
