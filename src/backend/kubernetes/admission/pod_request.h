// A Pod or a PodGroup as the admission policy sees it (policy/policy.h): its images, sizes,
// queue, labels and annotations, and the ways out of a container it asks for.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "policy/policy.h"

namespace lockstep::kube {

struct PodPolicyOptions {
  std::string default_queue;               // the partition of pods without lockstep.dev/queue
  std::string gpu_resource = "nvidia.com/gpu";
};

// Errors name the field (a quantity that does not parse, a time-limit annotation).
Result<policy::Request> RequestOfPod(const nlohmann::json& pod, const PodPolicyOptions& options);
Result<policy::Request> RequestOfPodGroup(const nlohmann::json& group,
                                          const PodPolicyOptions& options);

}  // namespace lockstep::kube
