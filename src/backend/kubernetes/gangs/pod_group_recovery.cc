// The pod group scheduler's recovery after a restart of lockstepd: which gang each job an
// earlier lockstepd submitted stands for (before any pod is looked at, so that none is
// submitted twice), and, once every pod is listed, the pods of those gangs.
#include <algorithm>

#include "backend/kubernetes/gangs/gang_json.h"
#include "backend/kubernetes/gangs/pod_group_scheduler.h"
#include "common/log.h"

namespace lockstep::kube {

using gangs_internal::Deleting;
using gangs_internal::Str;

void PodGroupScheduler::RecoverJobs() {
  // Jobs submitted for gangs by an earlier lockstepd: by JobSpec::external when the job's JSON
  // has it, else by the name this scheduler gives them ("<namespace>/<gang>", user "k8s:<ns>").
  std::vector<backend::ExternalJob> jobs = admission_.ExternalJobs(nullptr);
  std::lock_guard<std::mutex> lock(mu_);
  for (const backend::ExternalJob& j : jobs) {
    // Stores from before JobSpec::external: the job's name is the key.
    std::string key = j.key.empty() ? j.name : j.key;
    if (key.empty()) continue;
    Group& g = groups_[key];
    g.key = key;
    g.job = j.job;
    g.run = j.run;
    if (j.phase == backend::ExternalJob::Phase::kPending) {
      g.phase = Phase::kPending;
      g.feature = j.features;  // Reconcile gives it to the nodes again
    } else if (j.phase == backend::ExternalJob::Phase::kRunning) {
      g.phase = Phase::kRunning;
    } else {
      groups_.erase(key);
      continue;
    }
    job_keys_[g.job] = key;
    recovering_[key] = std::max(1, j.node_count);
  }
}

void PodGroupScheduler::FinishRecovery() {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [key, node_count] : recovering_) {
    Group& g = groups_[key];
    const bool running = g.phase == Phase::kRunning;
    if (auto it = pods_.find(key); it != pods_.end()) {
      for (const auto& [name, shared] : it->second) {
        const Json& pod = *shared;
        if (Str(pod, "spec", "nodeName").empty() == running || Deleting(pod)) continue;
        g.pods[name] = Str(pod, "metadata", "uid");
      }
    }
    g.pods_per_node = std::max<std::int32_t>(
        1, (static_cast<std::int32_t>(g.pods.size()) + node_count - 1) / node_count);
    log::Info("pod groups: job {} is gang {} ({}, {} pods)", g.job, key,
              running ? "RUNNING" : "PENDING", g.pods.size());
    dirty_.insert(key);
  }
  recovering_.clear();
  for (Order& o : held_) orders_.push_back(std::move(o));
  held_.clear();
  ready_ = true;
  wake_.notify_all();
}

}  // namespace lockstep::kube
