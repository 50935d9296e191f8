// The availability planner: what every node has free now and at any future time, given that
// running jobs end at their time limits and reservations hold what they were promised. It
// answers "may this node give this much over [start, start + duration)?" and "when, at the
// earliest, can it?" (Fluxion's planner and Slurm's node_space_map answer the same questions).
//
// Each node keeps its holds: running jobs (from the past to their end) and future reservations
// ([start, end)). A node without future holds answers "now" queries from a cached free vector,
// which keeps the common case O(1) per node.
//
// Not thread-safe; one pass owns one planner.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "engine/model.h"
#include "engine/resources.h"

namespace lockstep::engine {

struct Hold {
  Time start = 0;  // for running jobs: the past; only `end` matters
  Time end = 0;
  ResourceVec amount;
  std::uint32_t owner = 0;  // running job index, or pending job index for reservations
};

// Holds live in one pool per planner, chained per node, so that building a planner for a pass
// costs one allocation, not two per node.
struct NodeWork {
  ResourceVec capacity;
  ResourceVec free_now;                                           // capacity minus running holds
  std::uint64_t free_devices = 0;                                 // GPU devices not allocated now
  std::array<std::uint32_t, kMaxGpuTypesPerNode> slot_type{};     // global GPU type of each slot
  std::array<std::uint64_t, kMaxGpuTypesPerNode> slot_devices{};  // device bits of each slot
  std::int32_t running_head = -1;  // chain of running holds in the pool
  std::int32_t future_head = -1;   // chain of reservations (start >= now)
  bool usable = false;             // up: may take new work
  // Free resources from now on as (time, free) steps, in the planner's step pool at
  // [steps_begin, steps_end); rebuilt when a hold changes.
  mutable std::uint32_t steps_begin = 0, steps_end = 0;
  mutable bool steps_valid = false;
};

class AvailabilityPlanner {
 public:
  // Builds every node's capacity and the holds of the running jobs. `running_ends[i]` is when
  // running job i is assumed to end (its time limit; at least now + 1).
  AvailabilityPlanner(const Snapshot& s, const std::vector<Time>& running_ends);

  Time now() const { return now_; }
  std::size_t node_count() const { return nodes_.size(); }
  const NodeWork& node(std::uint32_t n) const { return nodes_[n]; }

  // The resources a job needing `need` takes on node `n`, given `available` there; nullopt when
  // it does not fit (wrong GPU type, too little of something, or not the whole node when
  // exclusive). Untyped GPU requests take from the node's type slots in order.
  std::optional<ResourceVec> MapNeed(std::uint32_t n, const NodeNeed& need,
                                     const ResourceVec& available) const;

  // The least the node has free at any moment of [start, end).
  ResourceVec MinAvailable(std::uint32_t n, Time start, Time end) const;

  // What the node can give `need` over [start, start + duration), or nullopt.
  std::optional<ResourceVec> FitAt(std::uint32_t n, const NodeNeed& need, Time start,
                                   Seconds duration) const;

  // The earliest time >= from at which FitAt succeeds, or kInfiniteTime.
  Time EarliestFit(std::uint32_t n, const NodeNeed& need, Time from, Seconds duration) const;

  // The first time after `t` at which node n's availability changes, or kInfiniteTime.
  Time NextChangeAfter(std::uint32_t n, Time t) const;

  // Starts work now: takes `amount` and the GPU devices it names from node n until `end`.
  // Returns the device bits taken.
  std::uint64_t StartNow(std::uint32_t n, const ResourceVec& amount, Time end, std::uint32_t owner);

  // Promises `amount` on node n over [start, end) to a reservation.
  void Reserve(std::uint32_t n, const ResourceVec& amount, Time start, Time end,
               std::uint32_t owner);

  // A running job's hold on node n ends at `end` instead (preemption with a grace time; also
  // used to undo a trial).
  void SetRunningEnd(std::uint32_t n, std::uint32_t owner, Time end);

  // The running jobs whose holds on node n end in (now, by]: what a reservation waits for.
  std::vector<std::uint32_t> RunningEndingBy(std::uint32_t n, Time by) const;

 private:
  ResourceVec AvailableAt(const NodeWork& w, Time t) const;
  // The node's steps: a view into steps_pool_, valid until the next StepsOf call.
  std::pair<const std::pair<Time, ResourceVec>*, std::size_t> StepsOf(const NodeWork& w) const;
  void Link(std::int32_t* head, const Hold& h);
  // Calls f(hold) for every hold of a chain.
  template <typename F>
  void ForEach(std::int32_t head, F&& f) const {
    for (std::int32_t i = head; i >= 0; i = next_[i]) f(pool_[i]);
  }
  template <typename F>
  void ForEachMutable(std::int32_t head, F&& f) {
    for (std::int32_t i = head; i >= 0; i = next_[i]) f(pool_[i]);
  }

  Time now_;
  std::vector<NodeWork> nodes_;
  // Reused by EarliestFit so that a search allocates nothing.
  mutable std::vector<std::pair<Time, ResourceVec>> scratch_changes_;
  mutable std::vector<std::pair<Time, ResourceVec>> steps_pool_;  // every node's steps, appended
  std::vector<Hold> pool_;
  std::vector<std::int32_t> next_;
};

}  // namespace lockstep::engine
