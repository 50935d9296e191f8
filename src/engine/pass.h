// One planning pass over a Snapshot and its EngineState: plan() builds the state and throws it
// away, the Scheduler keeps it and undoes the pass's changes afterwards. Internal to the engine
// (pass.cc and scheduler.cc drive it, preemption.cc extends it).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/eligibility.h"
#include "engine/engine_state.h"
#include "engine/free_index.h"
#include "engine/limits.h"
#include "engine/model.h"
#include "engine/placement.h"
#include "engine/planner.h"
#include "engine/queue_order.h"
#include "engine/request.h"

namespace lockstep::engine {

// A shape and the QoS that picks its victims: the key of the pass's memo of failed preemption.
struct PreemptKey {
  ShapeKey shape;
  std::uint32_t qos = 0;
  bool operator==(const PreemptKey&) const = default;
};

struct PreemptKeyHash {
  std::size_t operator()(const PreemptKey& k) const;
};

class Pass {
 public:
  // `queue`: priorities and order of st.s.pending; with `queue_is_scratch` the plan takes its
  // priorities instead of a copy. Every reference must outlive the pass.
  Pass(EngineState& st, const PolicyOptions& o, QueueState& queue,
       PlanDetail detail = PlanDetail::kFull, bool queue_is_scratch = false);

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
  // Now, only as many of the best as placement may take, unless `every_candidate`.
  std::vector<Candidate> FeasibleAt(std::uint32_t j, Time t, bool every_candidate = false) const;
  // How many of the nodes without reservations placement may take for job j, which FeasibleAt
  // reads in best-fit order: the first that many are the best (max_nodes); 0 when it needs
  // them all.
  int BestFitCandidatesWanted(std::uint32_t j) const;
  // How many candidates FeasibleAt(j, now) would give, from a memo per need class; -1 when
  // the class is asked for the first time at this planner version (then FeasibleAt itself is
  // as cheap, and most first tries of a class start the job).
  int FeasibleCountNow(std::uint32_t j);
  std::optional<std::vector<Candidate>> Choose(std::uint32_t j,
                                               std::vector<Candidate> feasible) const;
  void Reserve(std::uint32_t j, Time start, const std::vector<Candidate>& chosen,
               PendingReason reason);
  bool preempted(std::uint32_t r) const { return preempted_.count(r) > 0; }
  void MarkPreempted(std::uint32_t r, std::uint32_t for_job, PreemptMode mode, Seconds grace);
  // Queued jobs the pass did not read because their block was skipped (pass_skip.cc).
  std::size_t skipped_jobs() const { return skipped_jobs_; }

 private:
  // Every pending job's priority breakdown, from the queue's context (a full plan's).
  std::vector<std::pair<JobId, PriorityBreakdown>> ComputeAllPriorities() const;
  ShapeKey KeyOf(std::uint32_t j) const;
  // Static limits, then whether the partition could ever run it; remembered per job.
  PendingReason StaticReason(std::uint32_t j);
  PendingReason CheckFitsPartitionOnce(std::uint32_t j);
  // The per-pass memo of shapes that cannot start now (the pass only takes resources away).
  bool DominanceApplies(std::uint32_t j) const;
  bool KnownNotToStartNow(std::uint32_t j) const;
  void NoteCannotStartNow(std::uint32_t j);
  // --exclusive=user: the latest end of the holds on node n over [start, end) that keep job j
  // off it (another user's, when either job is user-exclusive), or kNoUserConflict.
  static constexpr Time kNoUserConflict = std::numeric_limits<Time>::min();
  Time UserConflictUntil(std::uint32_t j, std::uint32_t n, Time start, Time end) const;
  // Job j's earliest fit on node n from `from`, past the holds that keep it off for its user.
  Time EarliestFitForUser(std::uint32_t j, std::uint32_t n, Time from, Time bound) const;
  // The node has the job's features (-C) and its filter (-x) does not exclude it.
  // And the reservations' windows let it run there from t (EngineState::WindowAllows).
  bool NodeMatches(std::uint32_t n, const JobShape& shape, Time t) const;
  bool HasFeatures(std::uint32_t n, const JobShape& shape) const;
  PendingReason CheckNodeFilter(std::uint32_t j) const;
  void StartJob(std::uint32_t j, const std::vector<Candidate>& chosen, bool backfilled);
  // What a start on `chosen` is charged: the resources it takes there.
  static Tres ChargedTres(const std::vector<Candidate>& chosen);
  // The limit a start of exclusive job j on `chosen` would exceed, or kNone.
  PendingReason ChargedLimitReason(std::uint32_t j, const std::vector<Candidate>& chosen) const;
  // False when the partition's free CPUs or GPUs, summed over its up nodes, are too few: the
  // O(1) test that turns most blocked jobs away before any node is looked at.
  bool MayFitNow(std::uint32_t j) const;
  // Earliest start of job j with its nodes; kInfiniteTime when there is none, or when
  // max_reservation_rounds stopped the search (then `stopped` is set).
  FoundStart EarliestStart(std::uint32_t j) const;
  FoundStart SearchEarliestStart(std::uint32_t j, Time from) const;
  void HandleBlocked(std::uint32_t j);
  // ---- A plan of starts (PlanDetail::kStarts) defers the reservation it is sure to find ----
  // Sure when the search cannot fail: then the job counts as reserved at once, and the search
  // runs only when the planner is next read (a later job tries to start, or a deeper
  // reservation is searched). A pass that ends first never searches.
  bool ReservationIsCertain(std::uint32_t j);
  void ReserveDeferred();
  bool TryPreempt(std::uint32_t j);
  PendingReason CheckEligibility(std::uint32_t j) const;
  void Pend(std::uint32_t j, PendingReason reason);
  void EstimateStarts();
  // What the pass does with pending job j in its turn.
  void Visit(std::uint32_t j);
  // What keeps job j from being considered now (held, dependencies, limits, can never fit),
  // or kNone.
  PendingReason ReasonToWait(std::uint32_t j);

  // ---- Heterogeneous jobs (pass_het.cc) ----
  // The turn of a component is its whole group's, at the first of them the walk reaches: all
  // start now, or all hold one reservation at a common time, or all wait.
  void VisitHetGroup(std::uint32_t j);
  // The pending indices of job j's group, leader first; empty when some are not pending.
  std::vector<std::uint32_t> HetGroupOf(std::uint32_t j);
  // A placement of every member at t, later members on what the earlier ones leave.
  std::optional<std::vector<std::vector<Candidate>>> PlaceGroupAt(
      const std::vector<std::uint32_t>& members, Time t) const;
  // The earliest time each member could start with the others, and where; nullopt when none.
  std::optional<std::pair<Time, std::vector<std::vector<Candidate>>>> SearchGroupStart(
      const std::vector<std::uint32_t>& members) const;
  void PendGroup(const std::vector<std::uint32_t>& members, PendingReason reason);

  // ---- Skipping blocks of the queue (pass_skip.cc) ----
  // Visits the queue in order: `order` block by block, merged with `special`; a block whose
  // summary shows that none of its jobs can start now, nor be reported, is passed over.
  void WalkQueue();
  bool CanSkip(const BlockSummary& summary) const;
  // No job of the floor's family with at least its needs can start now in this pass.
  bool FamilyDead(const JobFamilyFloor& floor) const;
  void AddToSummary(BlockSummary& summary, std::uint32_t j);
  // Job j (a fixed node count, no switch count) cannot start now: neither can any job of its
  // family that needs as much or more of everything.
  void NoteFamilyFailure(std::uint32_t j);

  const Snapshot& s_;
  const PolicyOptions& o_;
  QueueState& queue_;
  const PlanDetail detail_;
  const bool queue_is_scratch_;
  EngineState& st_;
  const std::vector<JobShape>& shapes_;
  const std::vector<Time>& running_ends_;
  AvailabilityPlanner& planner_;
  const Topology& topology_;
  LimitTracker limits_;
  const EligibilityIndex& eligibility_;
  std::unordered_map<JobId, std::uint32_t> array_started_;  // array tasks started in this pass
  // Heterogeneous jobs: pending index by id of every component (built on first use), and the
  // leaders whose group had its turn in this pass.
  std::unordered_map<JobId, std::uint32_t> het_index_;
  std::unordered_set<JobId> het_done_;
  Plan plan_;

  std::vector<std::uint32_t> pending_slot_;  // pending job -> index in plan_.pending, or kNone
  std::unordered_set<ShapeKey, ShapeKeyHash> cannot_start_now_;
  // Per need class (EngineState::need_class): the (nodes, duration) pairs that failed to start
  // now, none dominating another.
  std::vector<std::vector<std::pair<std::int32_t, Seconds>>> failed_front_;
  // Per need class: how long each node that could take the class's per-node need now can keep
  // giving it (AvailabilityPlanner::FitsUntil), longest first, as of a planner version. Jobs of
  // one class differ only in node count and duration, so most tests of "could it start now"
  // are a binary search here rather than a visit of every free node; a start or a reservation
  // changes the version and the next test rebuilds the list.
  struct WindowEnds {
    std::uint64_t version = ~std::uint64_t{0};
    bool built = false;       // false: asked once at `version`, not built
    std::vector<Time> until;  // descending
  };
  std::vector<WindowEnds> window_ends_;
  std::unordered_map<ShapeKey, PendingReason, ShapeKeyHash> partition_fit_;
  std::unordered_set<std::uint32_t> preempted_;
  std::unordered_set<PreemptKey, PreemptKeyHash> preemption_failed_;
  // The earliest start found per shape in this pass: a lower bound for the next of that shape.
  mutable std::unordered_map<ShapeKey, Time, ShapeKeyHash> earliest_found_;
  std::vector<FreeSum> partition_free_;  // now, over usable nodes; this pass's copy
  const NodePartitions& node_partitions_;
  std::vector<bool> partition_blocked_;  // a job of the partition waits for resources
  // Nodes by free GPUs now: starts look only where enough is free.
  FreeNodeIndex& free_index() const { return st_.free_index; }
  bool any_blocked_ = false;
  int reservations_ = 0;
  std::int64_t tested_ = 0;  // jobs examined (Plan::jobs_tested)
  // Per family (EngineState::families): what failed to start now, none dominating another.
  struct FailedNeed {
    std::int32_t cpus = 0, gpus = 0, nodes = 0;
    std::int64_t mem_mb = 0;
    Seconds duration = 0;
  };
  std::vector<std::vector<FailedNeed>> family_failed_;
  std::size_t skipped_jobs_ = 0;
  std::uint32_t deferred_ = kNone;  // the blocked job whose reservation is deferred
  bool infinite_hold_ = false;      // a running job or a start holds its nodes forever
  // A job with --exclusive=user is pending or running: a node's fit depends on whose jobs hold
  // it, not on shapes alone, and the memos by shape are off.
  const bool user_exclusive_;
  bool running_ends_checked_ = false;
};

// Tries to start pending job j by preempting running jobs, as PolicyOptions::preempt allows.
// On success the victims are recorded in the plan and j holds a reservation for when they are
// gone; nothing is evicted for a job that would still not start.
bool TryPreemptFor(Pass& pass, std::uint32_t j);

}  // namespace lockstep::engine
