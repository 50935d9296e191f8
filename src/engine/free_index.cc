#include "engine/free_index.h"

#include <algorithm>
#include <tuple>

namespace lockstep::engine {

FreeNodeIndex::FreeNodeIndex(const Snapshot& s, const AvailabilityPlanner& planner,
                             const NodePartitions& node_partitions)
    : s_(s),
      planner_(planner),
      partitions_(s.partitions.size()),
      node_partitions_(node_partitions),
      filed_(s.nodes.size()),
      rank_(s.nodes.size(), 0),
      irregular_(s.nodes.size(), 0),
      position_hint_(s.nodes.size(), 0) {
  std::vector<std::int32_t> weights;
  for (const Node& n : s.nodes) weights.push_back(n.weight);
  std::sort(weights.begin(), weights.end());
  weights.erase(std::unique(weights.begin(), weights.end()), weights.end());
  for (std::uint32_t n = 0; n < s.nodes.size(); ++n)
    rank_[n] = static_cast<std::uint32_t>(
        std::lower_bound(weights.begin(), weights.end(), s.nodes[n].weight) - weights.begin());
  std::size_t max_gpus = 0;
  for (const Node& n : s.nodes) max_gpus = std::max(max_gpus, n.gpus.size());
  for (PartitionIndex& p : partitions_)
    p.buckets.assign(weights.size(),
                     std::vector<Bucket>(std::min<std::size_t>(max_gpus, kMaxDevicesPerNode) + 1));
  // Built in bulk: every node's entry, sorted, then appended in order.
  std::vector<std::tuple<std::uint32_t, int, Entry>> entries;
  for (std::uint32_t n = 0; n < s.nodes.size(); ++n) {
    const NodeWork& w = planner.node(n);
    if (!w.usable || w.free_now.cpus <= 0) continue;
    if (w.future_head >= 0) {
      Update(n);
      continue;
    }
    int level = std::clamp(w.free_now.total_gpus(), 0, kMaxDevicesPerNode);
    filed_[n] = {level, w.free_now.cpus};
    entries.push_back({rank_[n], level, {w.free_now.cpus, n}});
  }
  std::sort(entries.begin(), entries.end());
  for (const auto& [rank, level, entry] : entries)
    for (std::uint32_t p : node_partitions_.of(entry.second))
      partitions_[p].buckets[rank][level].entries.push_back(entry);
}

void FreeNodeIndex::Unfile(std::uint32_t n) {
  Filed& f = filed_[n];
  if (f.level < 0) return;
  for (std::uint32_t p : node_partitions_.of(n)) ++partitions_[p].buckets[rank_[n]][f.level].dead;
  f.level = -1;  // the entry stays behind, dead
}

void FreeNodeIndex::CompactIfMostlyDead(Bucket& b, int level) {
  if (b.dead <= b.entries.size() / 2 + 16) return;
  std::erase_if(b.entries, [&](const Entry& e) { return !Live(e, level); });
  b.dead = 0;
}

void FreeNodeIndex::Update(std::uint32_t n) {
  const NodeWork& w = planner_.node(n);
  if (irregular_[n]) return;
  if (!w.usable) {
    Unfile(n);
    return;
  }
  if (w.future_head >= 0) {
    // Left in its bucket (the visits skip it): filed as it was before the reservation, which
    // is how AfterRollback finds it.
    irregular_[n] = 1;
    for (std::uint32_t p : node_partitions_.of(n)) partitions_[p].irregular.push_back(n);
    return;
  }
  int level = std::clamp(w.free_now.total_gpus(), 0, kMaxDevicesPerNode);
  if (filed_[n].level == level && filed_[n].cpus == w.free_now.cpus) return;
  Unfile(n);
  if (w.free_now.cpus <= 0) return;
  filed_[n] = {level, w.free_now.cpus};
  const Entry e{w.free_now.cpus, n};
  for (std::uint32_t p : node_partitions_.of(n)) {
    Bucket& b = partitions_[p].buckets[rank_[n]][level];
    // Where the node's entry was last found: right unless entries were inserted or compacted
    // away before it since (an equal entry in another partition's bucket is its entry too).
    std::uint32_t& hint = position_hint_[n];
    if (hint < b.entries.size() && b.entries[hint] == e) {
      --b.dead;  // its own dead entry, live again
      continue;
    }
    auto it = std::lower_bound(b.entries.begin(), b.entries.end(), e);
    hint = static_cast<std::uint32_t>(it - b.entries.begin());
    if (it != b.entries.end() && *it == e) {
      --b.dead;
    } else {
      b.entries.insert(it, e);
      CompactIfMostlyDead(b, level);
    }
  }
}

void FreeNodeIndex::AfterRollback(const std::vector<std::uint32_t>& touched) {
  // Nodes irregular before the pass (a reservation's window still to come holds them in the
  // planner's base state) are looked at again too: they stay irregular.
  std::vector<std::uint32_t> were;
  for (PartitionIndex& p : partitions_) {
    for (std::uint32_t n : p.irregular)
      if (irregular_[n]) {
        irregular_[n] = 0;
        were.push_back(n);
      }
    p.irregular.clear();
  }
  for (std::uint32_t n : touched) Update(n);
  for (std::uint32_t n : were) Update(n);
}

}  // namespace lockstep::engine
