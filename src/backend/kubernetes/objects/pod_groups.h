// Pods that others create and that name lockstep as their scheduler (spec.schedulerName
// "lockstep"): which gang each belongs to, its priority and queue; a gang as an engine job
// request; and the engine's allocation back as "pod -> node" bindings. Pure functions; safe to
// call from any thread. Rules in docs/kubernetes.md, "Objects".
//
// A pod's gang is, in this order:
//  1. the coscheduling PodGroup named by its label scheduling.x-k8s.io/pod-group (the
//     scheduler-plugins PodGroup, scheduling.x-k8s.io/v1alpha1; spec.minMember pods at least);
//  2. the annotations lockstep.dev/gang (a name) and lockstep.dev/gang-size (the count);
//  3. else the pod alone (a gang of one).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend/kubernetes/objects/pod_usage.h"
#include "common/status.h"
#include "engine/model.h"

namespace lockstep::kube {

inline constexpr const char* kPodGroupLabel = "scheduling.x-k8s.io/pod-group";
inline constexpr const char* kGangAnnotation = "lockstep.dev/gang";
inline constexpr const char* kGangSizeAnnotation = "lockstep.dev/gang-size";
inline constexpr const char* kQueueLabel = "lockstep.dev/queue";

// A pod as a gang scheduler's table holds it: shared, never changed, so that gangs and their
// submissions read the table's pods without copying them.
using SharedPod = std::shared_ptr<const nlohmann::json>;

struct PodGroupOptions {
  std::string default_queue;  // the queue (partition) of pods without kQueueLabel
  std::string scheduler_name = kSchedulerName;
};

enum class GangSource : std::uint8_t { kSingle, kPodGroup, kAnnotation };

// One pod's gang, priority and queue.
struct PodMembership {
  std::string ns, pod;
  std::string gang;  // "<namespace>/<name>": the PodGroup's or annotation's name, else the pod's
  GangSource source = GangSource::kSingle;
  std::int32_t min_member = 1;
  std::int32_t priority = 0;  // spec.priority (from the PriorityClass); 0 when absent
  std::string queue;
};

// The PodGroup a pod names by label, or nullopt; look it up in the pod's namespace.
std::optional<std::string> PodGroupName(const nlohmann::json& pod);

// The pod's membership. `pod_group` is the PodGroup object PodGroupName() named (nullptr when it
// names none). Errors name the pod and the field: a named PodGroup that was not found
// (NotFound), minMember not a positive integer, gang-size not a positive integer or without a
// gang name, a gang name without gang-size.
Result<PodMembership> MembershipOf(const nlohmann::json& pod, const nlohmann::json* pod_group,
                                   const PodGroupOptions& options = {});

// The pods of one gang waiting to be placed.
struct Gang {
  std::string key;  // PodMembership::gang
  GangSource source = GangSource::kSingle;
  std::int32_t min_member = 1;
  std::int32_t priority = 0;         // the highest of its pods
  std::string queue;                 // its first pod's
  std::vector<SharedPod> pods;       // unbound members, by name
  std::int32_t bound = 0;            // members already on a node
  // Enough members exist to place it (coscheduling's minMember counts bound members too).
  bool Ready() const { return static_cast<std::int32_t>(pods.size()) + bound >= min_member; }
};

struct Gangs {
  std::vector<Gang> gangs;     // by key
  std::vector<Status> errors;  // pods left out, each error naming its pod
};

// Groups the pods lockstep must place: spec.schedulerName is options.scheduler_name, not
// created by lockstep (no kJobIdLabel), not being deleted, not ended. Unbound ones are a gang's
// `pods`; bound ones count in `bound`. `pod_groups` maps "<namespace>/<name>" to PodGroup
// objects. A pod whose gang size or queue disagrees with its gang's first pod is left out with
// an error.
Gangs GroupPods(const std::vector<SharedPod>& pods,
                const std::map<std::string, nlohmann::json>& pod_groups,
                const PodGroupOptions& options = {});
Gangs GroupPods(std::vector<nlohmann::json> pods,
                const std::map<std::string, nlohmann::json>& pod_groups,
                const PodGroupOptions& options = {});

struct GangOptions {
  // Pods that may share one node. 1: one pod per node.
  std::int32_t pods_per_node = 1;
  ResourceNames names;
};

// A gang as one engine job: one task per pod, every pod given the largest request of the gang
// ("the max shape"), on min_nodes = ceil(pods / pods_per_node) nodes with the pods spread
// evenly (ceil(pods / nodes) per node).
struct GangRequest {
  engine::JobRequest request;      // gpu_type kNone: intern `gpu_type` into the Snapshot
  std::string gpu_type;            // "": any whole GPU; "mig-<profile>" for MIG resources
  std::string gpu_resource;        // the extended resource asked, "" when none
  PodResources per_pod;            // the max shape
  std::int32_t pods_per_node = 1;  // as placed: ceil(pods / min_nodes)
};

// cpus_per_task = the largest CPU request rounded up to whole CPUs (at least 1),
// mem_per_node_mb = the largest memory request in MiB (rounded up) x pods per node,
// gpus_per_task = the largest GPU count, time_limit = the largest activeDeadlineSeconds when
// every pod has one. Errors: no pods, a pod asking two GPU resources, or pods asking different
// ones (the engine places one GPU type per job), a bad quantity.
Result<GangRequest> GangToRequest(const std::vector<const nlohmann::json*>& pods,
                                  const GangOptions& options = {});
Result<GangRequest> GangToRequest(const std::vector<nlohmann::json>& pods,
                                  const GangOptions& options = {});

// The pods read in place.
std::vector<const nlohmann::json*> PodPointers(const std::vector<SharedPod>& pods);

struct PodBinding {
  std::string ns, pod, node;
  bool operator==(const PodBinding&) const = default;
};

// The engine's allocation of a GangRequest back to pods: the allocation's nodes in order, each
// taking the next `pods_per_node` pods. Errors: too few nodes, a node index outside `nodes`.
// The pods are read in place (the gang scheduler's table holds them).
Result<std::vector<PodBinding>> BindingsFor(const std::vector<const nlohmann::json*>& pods,
                                            const GangRequest& request,
                                            const engine::Allocation& allocation,
                                            const std::vector<engine::Node>& nodes);

// The Binding object to POST to /api/v1/namespaces/<ns>/pods/<pod>/binding.
nlohmann::json BindingObject(const PodBinding& b);

}  // namespace lockstep::kube
