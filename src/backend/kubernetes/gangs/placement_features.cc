#include "backend/kubernetes/gangs/placement_features.h"

#include "common/log.h"

namespace lockstep::kube {

bool PlacementFeatures::OnNode(const nlohmann::json& node, bool present) {
  NodeView view = NodeViewOf(node);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = nodes_.find(view.name);
  if (!present) {
    if (it == nodes_.end()) return false;
    nodes_.erase(it);
    return true;
  }
  if (it != nodes_.end() && it->second == view) return false;  // a status update
  nodes_[view.name] = std::move(view);
  return true;
}

std::set<std::string> PlacementFeatures::NodesAllowingLocked(const GangPlacement& placement) const {
  std::set<std::string> out;
  for (const auto& [name, view] : nodes_)
    if (placement.Allows(view)) out.insert(name);
  return out;
}

bool PlacementFeatures::Refresh() {
  std::lock_guard<std::mutex> lock(mu_);
  bool moved = false;
  for (auto& [name, f] : features_) {
    std::set<std::string> nodes = NodesAllowingLocked(f.placement);
    if (nodes == f.nodes) continue;
    f.nodes = std::move(nodes);
    moved = true;
  }
  if (moved) {
    Status st = SyncLocked();
    if (!st.ok())  // only adding features can fail
      log::Warning("pod groups: placement features: {}", st.ToString());
  }
  return moved;
}

Status PlacementFeatures::SyncLocked() {
  std::map<std::string, std::set<std::string>> all;
  for (const auto& [name, f] : features_) all[name] = f.nodes;
  return admission_->SetPlacementFeatures(all);
}

void PlacementFeatures::ReleaseLocked(const std::string& gang) {
  auto h = holds_.find(gang);
  if (h == holds_.end()) return;
  const std::string feature = h->second;
  holds_.erase(h);
  for (const auto& [other, f] : holds_)
    if (f == feature) return;  // still another gang's
  features_.erase(feature);
}

Result<std::string> PlacementFeatures::Register(const std::string& gang,
                                                const GangPlacement& placement,
                                                const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string feature = name.empty() ? placement.FeatureName() : name;
  if (feature.empty()) {
    const std::size_t before = features_.size();
    ReleaseLocked(gang);
    if (features_.size() != before) (void)SyncLocked();  // dropping cannot fail
    return feature;
  }
  auto taken = features_.find(feature);
  if (name.empty() && taken != features_.end() &&
      taken->second.placement.canonical() != placement.canonical())
    feature = placement.LongFeatureName();  // two placements, one short name
  if (auto h = holds_.find(gang); h != holds_.end() && h->second == feature) return feature;
  if (!features_.count(feature)) {
    features_[feature] = {placement, NodesAllowingLocked(placement)};
    if (Status st = SyncLocked(); !st.ok()) {
      features_.erase(feature);
      return st;
    }
  }
  const std::size_t before = features_.size();
  ReleaseLocked(gang);
  holds_[gang] = feature;
  if (features_.size() != before) (void)SyncLocked();  // the gang's earlier one went
  return feature;
}

bool PlacementFeatures::Holds(const std::string& gang, const std::string& feature) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto h = holds_.find(gang);
  return h != holds_.end() && h->second == feature;
}

void PlacementFeatures::Retain(const std::function<bool(const std::string& gang)>& waiting) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> done;
  for (const auto& [gang, feature] : holds_)
    if (!waiting(gang)) done.push_back(gang);
  if (done.empty()) return;
  const std::size_t before = features_.size();
  for (const std::string& gang : done) ReleaseLocked(gang);
  if (features_.size() != before) (void)SyncLocked();  // dropping cannot fail
}

std::size_t PlacementFeatures::NodesWith(const std::string& feature) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = features_.find(feature);
  return it == features_.end() ? 0 : it->second.nodes.size();
}

std::size_t PlacementFeatures::node_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return nodes_.size();
}

bool PlacementFeatures::NodeAllows(const std::string& node, const GangPlacement& placement) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = nodes_.find(node);
  return it != nodes_.end() && placement.Allows(it->second);
}

}  // namespace lockstep::kube
