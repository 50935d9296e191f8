// What lockstepd takes from health-only agents (the DaemonSet of deploy/kubernetes, `lockstep-agent
// --health-only`): with `backend: kubernetes`, nodes and runs are the Kubernetes backend's, so of
// the agents' events only their health reports go on to the controller. The rest (their nodes
// reported on registration or when silent, the runs they know, which are none) is dropped:
// passed on, it would say the Kubernetes backend's runs on those nodes had ended.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"

namespace lockstep::lockstepd {

// Forwards NodeHealth to `target`, which it does not own and which must outlive it.
class HealthOnlySink : public backend::EventSink {
 public:
  explicit HealthOnlySink(backend::EventSink& target) : target_(target) {}
  void NodesReported(std::vector<backend::NodeReport>, bool) override {}
  void RunsAlive(std::vector<std::string>, std::vector<backend::RunId>) override {}
  void RunExited(backend::RunId, backend::ExitStatus) override {}
  void LaunchFailed(backend::RunId, std::string) override {}
  void StepNodeExited(JobId, std::int32_t, std::string, backend::ExitStatus) override {}
  void StepOutput(std::vector<backend::OutputChunk>) override {}
  void JobHookFailed(backend::JobHookFailure) override {}
  void NodeHealth(backend::NodeHealthReport report) override {
    target_.NodeHealth(std::move(report));
  }

 private:
  backend::EventSink& target_;
};

}  // namespace lockstep::lockstepd
