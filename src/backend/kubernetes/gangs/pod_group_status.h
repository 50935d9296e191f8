// The status lockstep writes to a coscheduling PodGroup (scheduling.x-k8s.io/v1alpha1), with the
// meaning scheduler-plugins' coscheduling gives it, so `kubectl get podgroups` and the tools that
// read it (Kubeflow's training operator) see the gang's progress:
//
//   phase      Pending     waiting: fewer than minMember pods, or no room for the gang yet
//              Scheduling  lockstep is binding the gang (fewer than minMember bound)
//              Scheduled   minMember pods bound to nodes
//              Running     minMember pods Running or Succeeded
//              Finished    minMember pods Succeeded
//              Failed      a pod Failed, and minMember pods have run (Running, Succeeded, Failed)
//   scheduled, running, succeeded, failed   the group's pods bound / in each phase
//   scheduleStartTime   when lockstep began placing the complete gang (its job's submission)
//   occupiedBy          "<namespace>/<owner>" of the first pod's owner references, sorted
//
// Finished and Failed are kept once every pod of the group has ended or gone (as coscheduling
// stops reconciling a finished group); a new unfinished pod starts the phases over.
// Pure functions, safe from any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace lockstep::kube {

struct PodGroupStatusInput {
  const nlohmann::json* pod_group = nullptr;  // as the apiserver returned it (spec and status)
  std::vector<const nlohmann::json*> pods;    // the pods labelled with it, by name
  bool binding = false;                       // lockstep is posting the gang's Bindings
  std::string schedule_start;                 // RFC 3339; "": keep the PodGroup's
};

// The PodGroup's status as it should be (phase, counts, and scheduleStartTime and occupiedBy when
// known).
nlohmann::json DesiredPodGroupStatus(const PodGroupStatusInput& in);

// The `status` to merge-patch, or nullopt when the PodGroup's status says it already (every field
// of the desired status equal; absent counts read as 0) or holds a final phase that stands.
std::optional<nlohmann::json> PodGroupStatusUpdate(const PodGroupStatusInput& in);

}  // namespace lockstep::kube
