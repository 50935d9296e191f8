// The availability planner: what every node has free now and at any future time, given that
// running jobs end at their time limits and reservations hold what they were promised. It
// answers "may this node give this much over [start, start + duration)?" and "when, at the
// earliest, can it?" (Fluxion's planner and Slurm's node_space_map answer the same questions).
//
// Each node keeps its holds: running jobs (from the past to their end) and future reservations
// ([start, end)). A node without future holds answers "now" queries from a cached free vector,
// which keeps the common case O(1) per node.
//
// plan() builds a planner for one pass and throws it away. The Scheduler keeps one between passes:
// it adds and removes running holds as jobs start and end (AddRunning, RemoveRunning), and
// brackets each pass with BeginPass and Rollback, which undoes what the pass did (starts,
// reservations, preemption trials) so that the next pass starts from the running jobs alone.
// Cached step functions survive a pass for every node the pass did not touch.
//
// Not thread-safe; one owner at a time.
#pragma once

#include <cstdint>
#include <limits>
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

  // The earliest time >= from at which FitAt succeeds, or kInfiniteTime (also when that time
  // would be after `latest`: a search that needs no later answer stops there).
  Time EarliestFit(std::uint32_t n, const NodeNeed& need, Time from, Seconds duration,
                   Time latest = kInfiniteTime) const;

  // For a window starting now: the end of the longest window [now, end) over which node n can
  // give `need` (FitAt(n, need, now, end - now) succeeds exactly when end <= the result);
  // kInfiniteTime when every window fits, kNoWindow when not even the first moment does.
  static constexpr Time kNoWindow = std::numeric_limits<Time>::min();
  Time FitsUntil(std::uint32_t n, const NodeNeed& need) const;

  // Changes whenever any node's availability may have changed: what a memo of answers is
  // valid for.
  std::uint64_t version() const { return version_; }
  // Changes when the holds of running jobs or a node's usability change outside a pass (not
  // when the clock moves on: availability from now on stays what it was). With no change
  // made by the pass in progress (changes_in_pass() == 0), equal base versions mean equal
  // answers to every question about times from now on.
  std::uint64_t base_version() const { return base_version_; }
  std::uint64_t changes_in_pass() const { return changes_in_pass_; }

  // Calls f(hold) for every hold on node n: running jobs' and reservations'.
  template <typename F>
  void VisitHolds(std::uint32_t n, F&& f) const {
    ForEach(nodes_[n].running_head, f);
    ForEach(nodes_[n].future_head, f);
  }

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

  // Appends to `owners` the running jobs whose holds on node n end in (now, by]: what a
  // reservation waits for.
  void RunningEndingBy(std::uint32_t n, Time by, std::vector<std::uint32_t>& owners) const;

  // What a running allocation holds on node n, counted per GPU type slot.
  ResourceVec AmountOf(std::uint32_t n, const NodeAllocation& a) const;

  // ---- Kept between passes (Scheduler only; never during a pass) ----
  // A running job's share of node n until `end` (devices: the GPU device bits it holds).
  void AddRunning(std::uint32_t n, const NodeAllocation& a, Time end, std::uint32_t owner);
  // Gives back what AddRunning took.
  void RemoveRunning(std::uint32_t n, const NodeAllocation& a, std::uint32_t owner);
  // The running job `from` is now known as `to` (its index moved).
  void RelabelRunning(std::uint32_t n, std::uint32_t from, std::uint32_t to);
  void SetUsable(std::uint32_t n, bool usable) {
    nodes_[n].usable = usable;
    ++version_;
    ++base_version_;
  }
  // The clock moves on; every running hold must end after `now` (the Scheduler moves the ends
  // of jobs past their limits first).
  void SetNow(Time now) {
    now_ = now;
    ++version_;
  }

  // Records what the pass changes from here on; Rollback restores it and returns the nodes it
  // touched (their free-node index entries need refreshing).
  void BeginPass();
  std::vector<std::uint32_t> Rollback();

 private:
  // Saves node n (and nothing else) before a pass first changes it.
  void Touch(std::uint32_t n);
  ResourceVec AvailableAt(const NodeWork& w, Time t) const;
  // No reservation and at most one running hold: the common node, whose least availability
  // over a window is answered without building its steps. (Steps already built are read
  // instead: on a large cluster the hold is one more cache miss a node, and most nodes' steps
  // outlive a pass. EarliestFit always builds them: a search reads a node several times.)
  bool AtMostOneRunningHold(const NodeWork& w) const {
    return w.future_head < 0 && (w.running_head < 0 || next_[w.running_head] < 0);
  }
  // For such a node: what it has free at t >= now.
  ResourceVec AvailableFrom(const NodeWork& w, Time t) const {
    return w.running_head >= 0 && pool_[w.running_head].end <= t ? w.capacity : w.free_now;
  }
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
  std::uint64_t version_ = 0;
  std::uint64_t base_version_ = 0;
  std::uint64_t changes_in_pass_ = 0;
  std::vector<NodeWork> nodes_;
  // Reused by EarliestFit so that a search allocates nothing.
  mutable std::vector<std::pair<Time, ResourceVec>> scratch_changes_;
  mutable std::vector<std::pair<Time, ResourceVec>> steps_pool_;  // every node's steps, appended
  std::vector<Hold> pool_;
  std::vector<std::int32_t> next_;
  std::vector<std::int32_t> free_slots_;  // pool slots of removed holds, reused outside passes
  // The undo journal of the pass in progress.
  bool in_pass_ = false;
  std::size_t pass_pool_size_ = 0;
  std::vector<std::pair<std::uint32_t, NodeWork>> saved_nodes_;
  std::vector<std::pair<std::int32_t, Time>> saved_ends_;  // (pool slot, end before the pass)
  std::vector<bool> saved_;                                // per node: in saved_nodes_
};

}  // namespace lockstep::engine
