// Nodes indexed by what they have free now, for best-fit starts: per partition, buckets by
// (node weight, free GPUs), each ordered by (free CPUs, node index), which is best fit's own
// order (placement.h: lower weight, fewer GPUs then fewer CPUs left over, lower index). So the
// first node that fits, in bucket order from the job's GPU count up, is the best one. Nodes with
// reservations do not fit a bucket (what they can give depends on the window) and are always
// visited first; a node a pass reserves keeps its bucket entry, skipped by the visits, so that
// the rollback of the pass has nothing to move back.
//
// Built for one pass by plan(), or kept between passes by the Scheduler; not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/model.h"
#include "engine/node_partitions.h"
#include "engine/planner.h"

namespace lockstep::engine {

class FreeNodeIndex {
 public:
  FreeNodeIndex(const Snapshot& s, const AvailabilityPlanner& planner,
                const NodePartitions& node_partitions);

  // Node n's free resources, its reservations or its state changed.
  void Update(std::uint32_t n);

  // A pass was undone (the Scheduler's rollback): nodes that had reservations are filed by what
  // they have free again, and so are the other nodes the pass touched.
  void AfterRollback(const std::vector<std::uint32_t>& touched);

  // Visits the partition's nodes with reservations, then the others best-first from `gpus`
  // free GPUs up; stops at the first of those for which `visit(n)` returns true.
  template <typename Visit>
  void VisitBestFirst(std::uint32_t partition, int gpus, int cpus, Visit&& visit) {
    const PartitionIndex& p = partitions_[partition];
    for (std::uint32_t n : p.irregular) visit(n);
    for (const auto& by_level : p.buckets)
      for (int level = gpus; level < static_cast<int>(by_level.size()); ++level)
        for (auto it =
                 std::lower_bound(by_level[level].begin(), by_level[level].end(), Entry{cpus, 0});
             it != by_level[level].end(); ++it)
          if (!irregular_[it->second] && visit(it->second)) return;
  }

  // Visits every node of the partition with at least `gpus` GPUs and `cpus` CPUs free now,
  // and those with reservations.
  template <typename Visit>
  void VisitAtLeast(std::uint32_t partition, int gpus, int cpus, Visit&& visit) {
    const PartitionIndex& p = partitions_[partition];
    for (std::uint32_t n : p.irregular) visit(n);
    for (const auto& by_level : p.buckets)
      for (int level = gpus; level < static_cast<int>(by_level.size()); ++level)
        for (auto it =
                 std::lower_bound(by_level[level].begin(), by_level[level].end(), Entry{cpus, 0});
             it != by_level[level].end(); ++it)
          if (!irregular_[it->second]) visit(it->second);
  }

 private:
  using Entry = std::pair<std::int32_t, std::uint32_t>;  // (free CPUs, node)
  using Bucket = std::vector<Entry>;                     // sorted
  struct PartitionIndex {
    std::vector<std::vector<Bucket>> buckets;  // [weight rank][free GPUs]
    std::vector<std::uint32_t> irregular;      // nodes with reservations
  };
  struct Filed {
    std::int32_t level = -1;  // -1: not in a bucket
    std::int32_t cpus = 0;
  };
  void Unfile(std::uint32_t n);

  const Snapshot& s_;
  const AvailabilityPlanner& planner_;
  std::vector<PartitionIndex> partitions_;
  const NodePartitions& node_partitions_;
  std::vector<Filed> filed_;
  std::vector<std::uint32_t> rank_;  // weight rank of each node
  std::vector<std::uint8_t> irregular_;  // in some partition's `irregular` list
};

}  // namespace lockstep::engine
