// Nodes indexed by what they have free now, for best-fit starts: per partition, buckets by
// (node weight, free GPUs), each ordered by (free CPUs, node index), which is best fit's own
// order (placement.h: lower weight, fewer GPUs then fewer CPUs left over, lower index). So the
// first node that fits, in bucket order from the job's GPU count up, is the best one. Nodes with
// reservations do not fit a bucket (what they can give depends on the window) and are always
// visited first; a node a pass reserves keeps its bucket entry, skipped by the visits, so that
// the rollback of the pass has nothing to move back.
//
// A node that leaves a bucket leaves its entry behind, dead (its filing no longer matches), so
// that taking a node costs no shift of the bucket; filed again with the same free CPUs it
// revives the entry in place (a node of one CPU only ever flips between two states). Buckets
// are compacted when their dead entries outnumber the live ones.
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
                 std::lower_bound(by_level[level].entries.begin(), by_level[level].entries.end(),
                                   Entry{cpus, 0});
             it != by_level[level].entries.end(); ++it)
          if (Visible(*it, level) && visit(it->second)) return;
  }

  // Node n has reservations: it is visited first, out of best-fit order.
  bool irregular(std::uint32_t n) const { return irregular_[n] != 0; }

  // Visits every node of the partition with at least `gpus` GPUs and `cpus` CPUs free now,
  // and those with reservations.
  template <typename Visit>
  void VisitAtLeast(std::uint32_t partition, int gpus, int cpus, Visit&& visit) {
    const PartitionIndex& p = partitions_[partition];
    for (std::uint32_t n : p.irregular) visit(n);
    for (const auto& by_level : p.buckets)
      for (int level = gpus; level < static_cast<int>(by_level.size()); ++level)
        for (auto it =
                 std::lower_bound(by_level[level].entries.begin(), by_level[level].entries.end(),
                                   Entry{cpus, 0});
             it != by_level[level].entries.end(); ++it)
          if (Visible(*it, level)) visit(it->second);
  }

 private:
  using Entry = std::pair<std::int32_t, std::uint32_t>;  // (free CPUs, node)
  struct Bucket {
    std::vector<Entry> entries;  // sorted; live or dead
    std::uint32_t dead = 0;
  };
  struct PartitionIndex {
    std::vector<std::vector<Bucket>> buckets;  // [weight rank][free GPUs]
    std::vector<std::uint32_t> irregular;      // nodes with reservations
  };
  struct Filed {
    std::int32_t level = -1;  // -1: not in a bucket
    std::int32_t cpus = 0;
  };
  void Unfile(std::uint32_t n);
  // The entry is the node's current filing at GPU level `level`.
  bool Live(const Entry& e, int level) const {
    return filed_[e.second].level == level && filed_[e.second].cpus == e.first;
  }
  // Live, and the node has no reservation (those are visited first, from `irregular`).
  bool Visible(const Entry& e, int level) const { return Live(e, level) && !irregular_[e.second]; }
  void CompactIfMostlyDead(Bucket& b, int level);

  const Snapshot& s_;
  const AvailabilityPlanner& planner_;
  std::vector<PartitionIndex> partitions_;
  const NodePartitions& node_partitions_;
  std::vector<Filed> filed_;
  std::vector<std::uint32_t> rank_;  // weight rank of each node
  std::vector<std::uint8_t> irregular_;  // in some partition's `irregular` list
  std::vector<std::uint32_t> position_hint_;  // per node: where its entry was last seen
};

}  // namespace lockstep::engine
