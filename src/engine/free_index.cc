#include "engine/free_index.h"

#include <algorithm>

namespace lockstep::engine {

FreeNodeIndex::FreeNodeIndex(const Snapshot& s, const AvailabilityPlanner& planner)
    : s_(s),
      planner_(planner),
      partitions_(s.partitions.size()),
      partitions_of_node_(s.nodes.size()),
      filed_(s.nodes.size()),
      rank_(s.nodes.size(), 0),
      irregular_(s.nodes.size(), false) {
  std::vector<std::int32_t> weights;
  for (const Node& n : s.nodes) weights.push_back(n.weight);
  std::sort(weights.begin(), weights.end());
  weights.erase(std::unique(weights.begin(), weights.end()), weights.end());
  for (std::uint32_t n = 0; n < s.nodes.size(); ++n)
    rank_[n] = static_cast<std::uint32_t>(std::lower_bound(weights.begin(), weights.end(), s.nodes[n].weight) - weights.begin());
  for (std::uint32_t p = 0; p < s.partitions.size(); ++p) {
    partitions_[p].buckets.assign(weights.size(), std::vector<Bucket>(kMaxDevicesPerNode + 1));
    for (std::uint32_t n : s.partitions[p].nodes)
      if (n < s.nodes.size()) partitions_of_node_[n].push_back(p);
  }
  for (std::uint32_t n = 0; n < s.nodes.size(); ++n) Update(n);
}

void FreeNodeIndex::Unfile(std::uint32_t n) {
  Filed& f = filed_[n];
  if (f.level < 0) return;
  for (std::uint32_t p : partitions_of_node_[n]) partitions_[p].buckets[rank_[n]][f.level].erase({f.cpus, n});
  f.level = -1;
}

void FreeNodeIndex::Update(std::uint32_t n) {
  const NodeWork& w = planner_.node(n);
  if (!w.usable || irregular_[n]) return;
  if (w.future_head >= 0) {
    Unfile(n);
    irregular_[n] = true;
    for (std::uint32_t p : partitions_of_node_[n]) partitions_[p].irregular.push_back(n);
    return;
  }
  int level = std::clamp(w.free_now.total_gpus(), 0, kMaxDevicesPerNode);
  if (filed_[n].level == level && filed_[n].cpus == w.free_now.cpus) return;
  Unfile(n);
  if (w.free_now.cpus <= 0) return;
  filed_[n] = {level, w.free_now.cpus};
  for (std::uint32_t p : partitions_of_node_[n]) partitions_[p].buckets[rank_[n]][level].insert({w.free_now.cpus, n});
}

}  // namespace lockstep::engine
