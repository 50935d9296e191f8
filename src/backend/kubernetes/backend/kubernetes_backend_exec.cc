// Job steps on Kubernetes: srun --jobid=ID --overlap runs its tasks in the job's pods, through
// their exec subresource (exec_steps.h). Each node's tasks go to the run's pod on that node
// (the lowest rank's when `pods: per-task` put several there, task i to pod i modulo them).
#include <signal.h>

#include <algorithm>

#include "backend/kubernetes/backend/backend_internal.h"
#include "backend/kubernetes/backend/exec_steps.h"
#include "backend/kubernetes/backend/kubernetes_backend.h"

namespace lockstep::kube {

using backend_internal::JobPodIdentity;
using backend_internal::Meta;

Status KubernetesBackend::LaunchStep(backend::StepLaunch step) {
  // The run's pods on each node, by rank, from the informer's cache.
  std::map<std::string, std::vector<std::pair<std::int32_t, const Json*>>> by_node;
  const std::vector<Json> pods = pods_->List();
  for (const Json& pod : pods) {
    JobId job = 0;
    std::int32_t run = 0, rank = 0;
    if (!IsOwnJobPod(pod) || !JobPodIdentity(pod, &job, &run, &rank) || job != step.job ||
        run != step.run)
      continue;
    const std::string node = pod.value("spec", Json::object()).value("nodeName", "");
    by_node[node].emplace_back(rank, &pod);
  }
  // A step that cannot start is told to srun as its error, and ends: a refusal returned from
  // here would only be logged.
  auto refuse = [&](const std::string& why) {
    events_.StepOutput({backend::OutputChunk{step.job, step.step, 0, true,
                                             "lockstep: step " + std::to_string(step.job) + "." +
                                                 std::to_string(step.step) + ": " + why + "\n"}});
    for (const auto& [each, unused] : step.tasks_by_node)
      events_.StepNodeExited(step.job, step.step, each, backend::ExitStatus{1, 0, false});
    return Status::Ok();
  };
  std::vector<ExecSteps::Target> targets;
  for (auto& [node, tasks] : step.tasks_by_node) {
    auto it = by_node.find(node);
    if (it == by_node.end() || it->second.empty())
      return refuse("the job has no pod on node " + node + " (run " + std::to_string(step.run) +
                    ")");
    std::sort(it->second.begin(), it->second.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      const Json& pod = *it->second[i % it->second.size()].second;
      const std::string phase = pod.value("status", Json::object()).value("phase", "");
      if (phase != "Running")
        return refuse("pod " + Meta(pod, "name") + " on node " + node + " is " +
                      (phase.empty() ? "not started" : phase) + ", not Running");
      targets.push_back({Meta(pod, "namespace"), Meta(pod, "name"), node, std::move(tasks[i])});
    }
  }
  exec_steps_->Launch(step, std::move(targets));
  return Status::Ok();
}

Status KubernetesBackend::SignalStep(JobId job, std::int32_t step, int signo, Seconds) {
  return exec_steps_->Signal(job, step, signo);
}

}  // namespace lockstep::kube
