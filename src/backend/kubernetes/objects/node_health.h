// A Node's health as Kubernetes reports it (docs/health.md, "On Kubernetes"): the conditions
// that node problem detectors set (Node Problem Detector's, GKE's XidCriticalError, EKS's
// AcceleratedHardwareReady) and allocatable GPUs below capacity (the device plugin takes an
// unhealthy GPU away), as findings for lockstepd, which drains with a "k8s:" reason and resumes
// when they clear. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend/health.h"
#include "common/status.h"

namespace lockstep::kube {

// One condition that means trouble: of `type`, when its status is `bad_status`.
struct TroubleCondition {
  std::string type;
  std::string bad_status = "True";
};

// "XidCriticalError" (trouble when True) or "AcceleratedHardwareReady=False"; an error names
// the entry.
Result<TroubleCondition> ParseTroubleCondition(const std::string& entry);

// The findings of one Node object: a "k8s_condition" for each trouble condition it carries, and
// a "gpu_count" when allocatable `gpu_resource` is below its capacity. A full round (source
// "k8s"): a condition absent from it has cleared.
backend::NodeHealthReport NodeHealthFromObject(const nlohmann::json& node,
                                               const std::vector<TroubleCondition>& conditions,
                                               const std::string& gpu_resource);

}  // namespace lockstep::kube
