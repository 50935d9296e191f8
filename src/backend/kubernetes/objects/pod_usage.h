// What a pod takes from its node, as Kubernetes counts it, and the capacity that pods of other
// schedulers leave to lockstep. Pure functions; safe to call from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend/kubernetes/objects/node_mapping.h"
#include "common/status.h"

namespace lockstep::kube {

// The label on every pod lockstep creates, and the scheduler name lockstep answers to.
inline constexpr const char* kJobIdLabel = "lockstep.dev/job-id";
inline constexpr const char* kRankLabel = "lockstep.dev/rank";
inline constexpr const char* kSchedulerName = "lockstep";

// The extended resources that are GPUs (the same names as NodeMappingOptions').
struct ResourceNames {
  std::string gpu = "nvidia.com/gpu";
  std::string mig_prefix = "nvidia.com/mig-";
};

// Requested resources of a pod (or of one container).
struct PodResources {
  std::int64_t cpu_milli = 0;
  std::int64_t memory_bytes = 0;
  // GPU resources by their extended resource name ("nvidia.com/gpu",
  // "nvidia.com/mig-1g.10gb"); no zero entries.
  std::map<std::string, std::int64_t> devices;

  std::int64_t Devices(const std::string& resource) const {
    auto it = devices.find(resource);
    return it == devices.end() ? 0 : it->second;
  }

  PodResources& operator+=(const PodResources& o);
  bool operator==(const PodResources&) const = default;
};

// The pod's effective requests, as the scheduler and kubelet compute them: per resource, the
// larger of (the sum of the app containers plus the restartable init containers, "sidecars")
// and (each init container's request plus the sidecars started before it); plus
// spec.overhead. A container's request for a resource is resources.requests[r], or
// resources.limits[r] when it has no request (the apiserver's defaulting, which also makes
// extended resources' requests equal their limits). Errors name the pod and the field.
Result<PodResources> PodRequests(const nlohmann::json& pod, const ResourceNames& names = {});

// True while the pod holds resources on its node: bound (spec.nodeName set) and not in phase
// Succeeded or Failed. A pod being deleted (metadata.deletionTimestamp set) still holds them
// until it is gone or has ended.
bool PodOccupiesNode(const nlohmann::json& pod);

// True for pods lockstep schedules: labelled kJobIdLabel (created by lockstep) or naming
// `scheduler_name` in spec.schedulerName (created by others for lockstep to place).
bool IsLockstepPod(const nlohmann::json& pod, const std::string& scheduler_name = kSchedulerName);

// The summed requests of the foreign pods (not IsLockstepPod) that occupy each node, by node
// name. Nodes without such pods are absent. Errors name the pod.
Result<std::map<std::string, PodResources>> ForeignUsageByNode(
    const std::vector<nlohmann::json>& pods, const ResourceNames& names = {},
    const std::string& scheduler_name = kSchedulerName);

// The node with `used` taken away: allocatable milli-CPUs and bytes reduced (then floored to
// whole CPUs and MiB again, never below 0), and GPU devices taken from the group of the same
// extended resource; groups that reach 0 are removed.
KubeNode WithoutUsage(KubeNode node, const PodResources& used);

}  // namespace lockstep::kube
