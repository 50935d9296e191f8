// One planning pass over a Snapshot: the state that plan() builds, uses and throws away.
// Internal to the engine (scheduler.cc drives it, preemption.cc extends it).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/eligibility.h"
#include "engine/free_index.h"
#include "engine/limits.h"
#include "engine/model.h"
#include "engine/placement.h"
#include "engine/planner.h"
#include "engine/request.h"

namespace lockstep::engine {

// Jobs with equal keys are interchangeable for placement: if one cannot start now, none can
// for the rest of the pass (the pass only ever takes resources away).
struct ShapeKey {
  std::uint32_t partition = 0;
  std::int32_t nodes = 0, max_nodes = 0, max_switches = 0;
  NodeNeed need;
  std::uint64_t features = 0;
  Seconds duration = 0;
  bool operator==(const ShapeKey&) const = default;
};

struct ShapeKeyHash {
  std::size_t operator()(const ShapeKey& k) const;
};

class Pass {
 public:
  Pass(const Snapshot& s, const PolicyOptions& o);

  Plan Run();

  // Exposed to preemption.cc.
  const Snapshot& snapshot() const { return s_; }
  const PolicyOptions& options() const { return o_; }
  AvailabilityPlanner& planner() { return planner_; }
  const JobShape& shape(std::uint32_t j) const { return shapes_[j]; }
  Time running_end(std::uint32_t r) const { return running_ends_[r]; }
  std::uint32_t OwnerOfPending(std::uint32_t j) const {
    return static_cast<std::uint32_t>(s_.running.size()) + j;
  }
  // Candidates for pending job j over [t, t + duration), from its partition's usable nodes.
  std::vector<Candidate> FeasibleAt(std::uint32_t j, Time t) const;
  std::optional<std::vector<Candidate>> Choose(std::uint32_t j,
                                               std::vector<Candidate> feasible) const;
  void Reserve(std::uint32_t j, Time start, const std::vector<Candidate>& chosen,
               PendingReason reason);
  bool preempted(std::uint32_t r) const { return preempted_.count(r) > 0; }
  void MarkPreempted(std::uint32_t r, std::uint32_t for_job, PreemptMode mode, Seconds grace);

 private:
  ShapeKey KeyOf(std::uint32_t j) const;
  PendingReason CheckFitsPartition(std::uint32_t j);
  void BuildNodeClasses();
  bool NodeMatches(std::uint32_t n, const JobShape& shape) const;
  void StartJob(std::uint32_t j, const std::vector<Candidate>& chosen, bool backfilled);
  // False when the partition's free CPUs or GPUs, summed over its up nodes, are too few: the
  // O(1) test that turns most blocked jobs away before any node is looked at.
  bool MayFitNow(std::uint32_t j) const;
  // Earliest start of job j with its nodes, or kInfiniteTime.
  std::pair<Time, std::vector<Candidate>> EarliestStart(std::uint32_t j) const;
  void HandleBlocked(std::uint32_t j);
  void EstimateStarts();
  std::vector<std::uint32_t> QueueOrder();

  const Snapshot& s_;
  const PolicyOptions& o_;
  std::vector<JobShape> shapes_;
  std::vector<Time> running_ends_;
  AvailabilityPlanner planner_;
  Topology topology_;
  LimitTracker limits_;
  EligibilityIndex eligibility_;
  Plan plan_;

  std::vector<std::uint32_t> pending_slot_;  // pending job -> index in plan_.pending, or kNone
  std::unordered_set<ShapeKey, ShapeKeyHash> cannot_start_now_;
  std::unordered_map<ShapeKey, PendingReason, ShapeKeyHash> partition_fit_;
  std::unordered_set<std::uint32_t> preempted_;
  // The earliest start found per shape in this pass: a lower bound for the next of that shape.
  mutable std::unordered_map<ShapeKey, Time, ShapeKeyHash> earliest_found_;
  struct FreeSum {
    std::int64_t cpus = 0, gpus = 0;
  };
  std::vector<FreeSum> partition_free_;  // now, over usable nodes
  NodePartitions node_partitions_;
  std::vector<bool> partition_blocked_;
  // Nodes by free GPUs now: starts look only where enough is free. Mutable: a cache over the
  // planner's state that visits tidy up.
  mutable std::optional<FreeNodeIndex> free_index_;  // built by the first start that needs it
  FreeNodeIndex& free_index() const {
    if (!free_index_) free_index_.emplace(s_, planner_, node_partitions_);
    return *free_index_;
  }
  struct NodeClass {
    std::uint32_t representative;
    int count;
    int usable;
  };
  std::vector<std::vector<NodeClass>> partition_classes_;  // per partition; built on first use
  bool classes_built_ = false;  // a job of the partition waits for resources
  bool any_blocked_ = false;
  int reservations_ = 0;
};

// Tries to start pending job j by preempting running jobs, as PolicyOptions::preempt allows.
// On success the victims are recorded in the plan and j holds a reservation for when they are
// gone; nothing is evicted for a job that would still not start.
bool TryPreemptFor(Pass& pass, std::uint32_t j);

}  // namespace lockstep::engine
