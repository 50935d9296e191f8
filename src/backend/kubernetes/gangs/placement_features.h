// The node features that stand for the placement constraints of waiting gangs (their pods'
// nodeSelector, required node affinity and tolerations: objects/node_constraints.h). Each
// distinct constraint is one feature, kept on exactly the Nodes that allow it as Nodes come, go
// and are relabelled or tainted, and given to the controller (Controller::
// BackendPlacementFeatures); the gang's job asks for it (JobSpec::constraint), so the engine,
// which knows nothing of Kubernetes, places it only there. docs/kubernetes.md, "Pod groups".
//
//   PlacementFeatures features(controller);
//   informer handlers: features.OnNode(node, present) -> true: call features.Refresh() soon
//   Result<std::string> f = features.Register("ns/gang", placement);  // before Submit()
//   features.Retain([&](const std::string& gang) { return gang still waits; });
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "backend/kubernetes/objects/node_constraints.h"
#include "common/status.h"
#include "backend/admission.h"

namespace lockstep::kube {

// Thread-safe. Its mutex is held across the admission call, so the controller sees the
// features in the order they changed (the controller never calls into it). The Admission is not
// owned and must outlive it.
class PlacementFeatures {
 public:
  explicit PlacementFeatures(backend::Admission* admission) : admission_(admission) {}

  // A Node was added or changed (`present`), or deleted. True when what placement reads of it
  // (labels, taints, its existence) changed: Refresh() then.
  bool OnNode(const nlohmann::json& node, bool present);
  // Evaluates every feature against the nodes again and tells the controller when one moved.
  // True when a feature's nodes changed.
  bool Refresh();

  // The feature of gang `gang`, whose pods' constraints are `placement`: on the nodes that
  // allow it, and known to the controller when this returns. `name`: the name to give it (a
  // recovered job's constraint); else placement.FeatureName(), or LongFeatureName() when another
  // placement has that name. The gang's earlier feature, if another, is released. "" for an
  // unconstrained placement. Errors: the controller's (a node carries 64 features at most).
  Result<std::string> Register(const std::string& gang, const GangPlacement& placement,
                               const std::string& name = "");
  // Whether `gang` holds `feature`.
  bool Holds(const std::string& gang, const std::string& feature) const;
  // Releases the features of the gangs for which `waiting` is false (called with this object's
  // mutex held, so a Register() cannot slip between the question and the release).
  void Retain(const std::function<bool(const std::string& gang)>& waiting);

  // How many nodes allow `feature`, and how many nodes there are (for messages).
  std::size_t NodesWith(const std::string& feature) const;
  std::size_t node_count() const;
  // Whether node `node` allows `placement` now; false for a node not known.
  bool NodeAllows(const std::string& node, const GangPlacement& placement) const;

 private:
  struct Feature {
    GangPlacement placement;
    std::set<std::string> nodes;
  };
  std::set<std::string> NodesAllowingLocked(const GangPlacement& placement) const;
  void ReleaseLocked(const std::string& gang);
  Status SyncLocked();

  backend::Admission* const admission_;
  mutable std::mutex mu_;
  std::map<std::string, NodeView> nodes_;     // guarded by mu_: by name
  std::map<std::string, Feature> features_;   // guarded by mu_: by feature name
  std::map<std::string, std::string> holds_;  // guarded by mu_: gang key -> feature
};

}  // namespace lockstep::kube
