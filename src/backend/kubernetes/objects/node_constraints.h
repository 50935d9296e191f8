// Where a pod may run, by the rules kube-scheduler applies: its spec.nodeSelector (every pair),
// its required node affinity (spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring
// Execution: terms ORed, within a term matchExpressions and matchFields ANDed) and the
// NoSchedule/NoExecute taints it tolerates. Preferred affinity is not read. Pure functions over
// the apiserver's JSON; errors name the pod and the field (docs/kubernetes.md, "Pods of other
// creators").
//
//   Result<GangPlacement> p = GangPlacement::OfPods(PodPointers(gang.pods));
//   if (p->Allows(NodeViewOf(node_json))) ...;
//   p->FeatureName();  // "pool=a100", "k8s-untainted", "k8s-1f0c9a2e"; "" when unconstrained
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep::kube {

enum class SelectorOp : std::uint8_t { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };

// One matchExpressions (on labels) or matchFields (on metadata.name) entry.
struct NodeSelectorRequirement {
  std::string key;
  SelectorOp op = SelectorOp::kIn;
  std::vector<std::string> values;  // sorted and unique; Gt/Lt: one integer
  std::int64_t number = 0;          // Gt/Lt: the value
  bool operator==(const NodeSelectorRequirement&) const = default;
};

// One of nodeSelectorTerms. A term without requirements matches no node (as kube-scheduler).
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;  // key metadata.name, In or NotIn
  bool operator==(const NodeSelectorTerm&) const = default;
};

struct Toleration {
  std::string key;      // "" (with exists): every key
  bool exists = false;  // operator Exists; else Equal (value must match)
  std::string value;
  std::string effect;  // "": every effect; else NoSchedule or NoExecute
  bool operator==(const Toleration&) const = default;
};

// A pod's constraints, normalised (sorted, deduplicated; tolerations of PreferNoSchedule
// dropped: they never keep a pod off a node).
struct PodPlacement {
  std::map<std::string, std::string> node_selector;
  std::vector<NodeSelectorTerm> required_terms;  // empty: no required node affinity
  std::vector<Toleration> tolerations;
  bool operator==(const PodPlacement&) const = default;
};

struct Taint {
  std::string key, value, effect;
  bool operator==(const Taint&) const = default;
};

// What placement reads of a Node.
struct NodeView {
  std::string name;
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;  // NoSchedule and NoExecute only
  bool operator==(const NodeView&) const = default;
};

NodeView NodeViewOf(const nlohmann::json& node);

// The pod's constraints; InvalidArgument naming the pod and the field for what kube-scheduler
// would refuse too (`pod ns/p: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring
// Execution.nodeSelectorTerms[0].matchExpressions[0].operator: "Near" is not In, NotIn, Exists,
// DoesNotExist, Gt or Lt`).
Result<PodPlacement> PodPlacementOf(const nlohmann::json& pod);

bool Tolerates(const std::vector<Toleration>& tolerations, const Taint& taint);
bool TermMatches(const NodeSelectorTerm& term, const NodeView& node);
bool PlacementAllows(const PodPlacement& placement, const NodeView& node);

// The placement of a gang, placed as one job: a node must allow every pod (the intersection of
// the pods' constraints, when they differ).
class GangPlacement {
 public:
  static Result<GangPlacement> Of(const std::vector<nlohmann::json>& pods);
  // The same over pods kept elsewhere, read in place.
  static Result<GangPlacement> OfPods(const std::vector<const nlohmann::json*>& pods);
  explicit GangPlacement(std::vector<PodPlacement> distinct = {});

  bool Allows(const NodeView& node) const;
  // No selector, no required affinity, and every taint tolerated: any node will do.
  bool Unconstrained() const;
  // The node feature that stands for it: `key=value` for a one-pair nodeSelector without
  // affinity or tolerations (when short), `k8s-untainted` for pods that only refuse taints,
  // else `k8s-<8 hex digits>` of the canonical form; "" when unconstrained. The tolerations
  // every pod gets from the DefaultTolerationSeconds admission (node.kubernetes.io/not-ready
  // and unreachable, NoExecute) do not count for the readable names.
  std::string FeatureName() const;
  // A longer name for the rare hash collision: `k8s-<16 hex digits>`.
  std::string LongFeatureName() const;
  // Canonical JSON text: equal for equal placements, whatever the order in the pods.
  const std::string& canonical() const { return canonical_; }
  const std::vector<PodPlacement>& pods() const { return pods_; }

 private:
  std::vector<PodPlacement> pods_;  // distinct, in canonical order
  std::string canonical_;
};

}  // namespace lockstep::kube
