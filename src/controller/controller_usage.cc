// sstat's data in lockstepd: backends send samples of what running tasks used
// (EventSink::StepUsage); the latest of each task is kept while its step runs, and
// GET /api/v1/jobs/{id}/usage returns them per step.
#include <algorithm>

#include "controller/controller.h"
#include "controller/controller_internal.h"

namespace lockstep::controller {
namespace {

nlohmann::json TaskJson(const backend::TaskUsage& u) {
  return {{"node", u.node},
          {"rank", u.rank},
          {"sampled", u.sampled},
          {"cpu_usec", u.cpu_usec},
          {"rss_bytes", u.rss_bytes},
          {"max_rss_bytes", u.max_rss_bytes},
          {"vm_bytes", u.vm_bytes},
          {"max_vm_bytes", u.max_vm_bytes},
          {"pages", u.pages},
          {"read_bytes", u.read_bytes},
          {"write_bytes", u.write_bytes},
          {"pids", u.pids}};
}

}  // namespace

void Controller::StepUsage(std::vector<backend::TaskUsage> samples) {
  QueueEvent([this, samples = std::move(samples)](Time) {
    for (const backend::TaskUsage& s : samples) {
      auto job = jobs_.find(s.run.job);
      // Only the current run of a job that holds its nodes, and only from one of them.
      if (job == jobs_.end() || job->second.restart_count != s.run.run ||
          !HoldsAllocation(job->second.state))
        continue;
      const auto& placement = job->second.placement;
      if (std::none_of(placement.begin(), placement.end(),
                       [&](const PlacedNode& p) { return p.node == s.node; }))
        continue;
      backend::TaskUsage& kept = usage_[{s.run.job, s.step}][{s.node, s.rank}];
      const std::int64_t max_rss = std::max({kept.max_rss_bytes, s.max_rss_bytes, s.rss_bytes});
      const std::int64_t max_vm = std::max({kept.max_vm_bytes, s.max_vm_bytes, s.vm_bytes});
      kept = s;
      kept.max_rss_bytes = max_rss;
      kept.max_vm_bytes = max_vm;
    }
  });
}

void Controller::ForgetUsageLocked(JobId job) {
  usage_.erase(usage_.lower_bound({job, -1}), usage_.lower_bound({job + 1, -1}));
}

Result<nlohmann::json> Controller::Usage(const Caller& caller, JobId id) const {
  HeldLock lock(*this);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return NotFound("Invalid job id specified");
  const JobEntry& e = it->second;
  LOCKSTEP_RETURN_IF_ERROR(CheckOwner(caller, e));
  nlohmann::json steps = nlohmann::json::array();
  auto add = [&](std::int32_t step, const std::string& nodes) {
    nlohmann::json tasks = nlohmann::json::array();
    auto found = usage_.find({id, step});
    if (found != usage_.end())
      for (const auto& [key, u] : found->second) tasks.push_back(TaskJson(u));
    steps.push_back({{"step_id", step < 0 ? nlohmann::json("batch") : nlohmann::json(step)},
                     {"nodes", nodes},
                     {"tasks", std::move(tasks)}});
  };
  if (HoldsAllocation(e.state) && !e.placement.empty()) add(-1, e.placement.front().node);
  for (auto s = steps_.lower_bound({id, 0}); s != steps_.end() && s->first.first == id; ++s)
    if (s->second->state == "RUNNING") {
      std::string nodes;
      for (const std::string& n : s->second->nodes) nodes += (nodes.empty() ? "" : ",") + n;
      add(s->first.second, nodes);
    }
  nlohmann::json out = {{"job_id", id}, {"state", JobStateName(e.state)}, {"steps", steps}};
  // Kubernetes' pods are measured by the kubelet, which lockstepd does not read yet.
  if (cluster_.backend == "kubernetes")
    out["no_data"] = "the kubernetes backend does not report task usage (pod metrics are not read)";
  return out;
}

}  // namespace lockstep::controller
