// What a planning pass reads about the cluster and its jobs, apart from the Snapshot itself:
// every pending job's shape, every running job's assumed end, the availability planner with
// the running jobs' holds, the free-node index, per-partition sums and node classes.
//
// plan() builds one from a Snapshot for a single pass. The Scheduler keeps one between passes
// and updates it as jobs and nodes change (scheduler.h); a pass changes only the planner and the
// free-node index, and the Scheduler undoes that after the pass (AvailabilityPlanner::Rollback).
//
// Holds a reference to the Snapshot it was built from, which must outlive it and stay where it
// is. Not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "engine/eligibility.h"
#include "engine/free_index.h"
#include "engine/limits.h"
#include "engine/model.h"
#include "engine/node_partitions.h"
#include "engine/placement.h"
#include "engine/planner.h"
#include "engine/request.h"

namespace lockstep::engine {

// Jobs with equal keys are interchangeable for placement: if one cannot start now, none can
// for the rest of the pass (the pass only ever takes resources away).
// A job's node filter as part of a key: equal when both jobs have none or equal ones.
struct FilterRef {
  const NodeFilter* filter = nullptr;
  bool operator==(const FilterRef& o) const {
    return filter == o.filter || (filter != nullptr && o.filter != nullptr && *filter == *o.filter);
  }
};

struct ShapeKey {
  std::uint32_t partition = 0;
  std::int32_t nodes = 0, max_nodes = 0, max_switches = 0;
  NodeNeed need;
  std::uint64_t features = 0;
  Seconds duration = 0;
  FilterRef filter;
  std::uint32_t reservation = kNone;
  bool operator==(const ShapeKey&) const = default;
};

struct ShapeKeyHash {
  std::size_t operator()(const ShapeKey& k) const;
};

// Nodes alike in capacity, GPU types and features: they answer "could this job ever fit" alike.
struct NodeClass {
  std::uint32_t representative = 0;
  int count = 0;
  int usable = 0;
};

// Free CPUs and GPUs now, summed over a partition's usable nodes.
struct FreeSum {
  std::int64_t cpus = 0, gpus = 0;
};

// Where a running job is assumed to end: its time limit, and never in the past (a job over its
// limit is about to be killed).
Time AssumedEnd(const Job& running, const Snapshot& s);

// What Pass::EarliestStart found for a job: its earliest start and nodes, or kInfiniteTime
// (`stopped`: the search bound max_reservation_rounds ended it).
struct FoundStart {
  Time start = kInfiniteTime;
  std::vector<Candidate> nodes;
  bool stopped = false;
};

// The first reservation search of the last pass, for the next pass to reuse: EASY searches for
// the same head after every event, and an event that neither ends nor starts a job (a
// submission behind the head, a hold, a cancellation of a pending job) leaves the running
// jobs' holds as they were. Valid while the planner's base version is unchanged, the pass has
// changed nothing before asking, and the new search starts no earlier than this one did and
// no later than what it found (no start was possible in between).
struct StartMemo {
  bool valid = false;
  JobId job = 0;
  ShapeKey key;
  std::uint64_t base_version = 0;
  Time from = 0;
  FoundStart found;
};

struct EngineState {
  explicit EngineState(const Snapshot& snapshot);
  EngineState(const EngineState&) = delete;
  EngineState& operator=(const EngineState&) = delete;

  // Recomputes partition_free and partition_classes (after a node changed state).
  void RecountPartitions();

  const Snapshot& s;
  std::vector<JobShape> shapes;  // per s.pending
  static constexpr std::uint8_t kFitUnknown = 0xff;
  static constexpr std::uint32_t kClassUnknown = 0xffffffffu;
  // Per s.pending: what the backfill scan reads of every job, apart from the Job itself, so that
  // a pass over a long queue touches one small record per job (the queue is in priority order,
  // the records in arrival order: each is a cache miss of its own; the scan used to read four
  // records per job). Built from the job and its shape when the job arrives.
  struct HotJob {
    Time begin_time = 0;
    // From when the job's --switches count no longer binds it (its wait is over): the lowest
    // Time without one, kInfiniteTime when it binds for good.
    Time switches_free_at = 0;
    Seconds duration = 0;  // the shape's
    std::uint32_t partition = 0;
    // The need class: jobs of one partition with the same per-node need and features; the
    // pass's memo of failed starts is kept per class. Computed on first use.
    std::uint32_t need_class = kClassUnknown;
    std::int32_t nodes = 0;  // the shape's (min) node count
    std::int32_t cpus_per_node = 0, gpus_per_node = 0;
    // What keeps the job from ever running as the partition, QoS and nodes are (its
    // partition's or QoS's static limits, PartitionConfig, BadConstraints, ReqNodeNotAvail;
    // kNone when nothing does), or kFitUnknown. Depends only on the shape, the limits and the
    // nodes: RecountPartitions forgets it.
    std::uint8_t static_reason = kFitUnknown;
    // Not held, without dependencies, an array throttle or a reservation, and not a component
    // of a heterogeneous job, so only its begin time can hold it back.
    bool plain : 1 = false;
    bool exclusive : 1 = false;
    bool fixed_nodes : 1 = false;  // max_nodes == nodes: no range of node counts
    // Filed in the Scheduler's special queue (QueueState::special): not plain, a begin time
    // after the clock when it was queued, a range of node counts or a binding switch count.
    bool special : 1 = false;
  };
  static HotJob HotOf(const Job& j, const JobShape& shape);
  // Whether job j goes to the special queue if queued at `now`.
  bool IsSpecial(std::uint32_t j, Time now) const;
  std::vector<HotJob> hot;
  // Pending and running jobs with --exclusive=user. While there are none (nearly always) a
  // node's fit for a job depends only on the job's shape, which the pass's memos rely on.
  std::int64_t exclusive_user_jobs = 0;
  std::unordered_map<ShapeKey, std::uint32_t, ShapeKeyHash> need_classes;
  std::uint32_t NeedClassOf(std::uint32_t j);
  // A job family: jobs of one partition, GPU type, exclusiveness, features and node filter,
  // whose needs therefore compare member by member. With a fixed node count and no switch
  // count, a job that cannot start now rules out every job of its family that needs as much
  // or more of everything, on as many nodes or more, for as long or longer (pass_skip.cc).
  struct NeedClassInfo {
    std::uint32_t family = 0;
    std::uint32_t partition = 0;
    NodeNeed need;
  };
  std::vector<NeedClassInfo> need_class_info;  // per need class
  struct FamilyInfo {
    std::uint32_t partition = 0;
    bool exclusive = false;
  };
  std::unordered_map<ShapeKey, std::uint32_t, ShapeKeyHash> families;
  std::vector<FamilyInfo> family_info;  // per family
  std::vector<Time> running_ends;       // per s.running
  AvailabilityPlanner planner;
  Topology topology;
  NodePartitions node_partitions;
  FreeNodeIndex free_index;
  std::vector<FreeSum> partition_free;                    // per partition
  std::vector<std::vector<NodeClass>> partition_classes;  // per partition
  EligibilityIndex eligibility;
  // Usage limits' counts of the running jobs, kept as they start and end (a pass copies it and
  // adds its own starts) rather than recounted from every running job at every pass.
  LimitTracker limits;
  StartMemo start_memo;
  // Reservations' windows as of s.now (Snapshot::windows): per node, the index of the window in
  // force there (kNone: none), and when the next window starts or ends (kInfiniteTime: never).
  // Windows still to come are the planner's holds; the Scheduler rebuilds at next_window_change.
  std::vector<std::uint32_t> node_window;
  Time next_window_change = kInfiniteTime;
  // The earliest time from t at which the windows let a job of `shape` start on node n: t; the
  // end of the window in force there, for a job not of it; kInfiniteTime for a job of a window
  // not in force there, or from its end on.
  // A job of a FLEX window may also start where no window is, and on its own after it.
  Time WindowFrom(std::uint32_t n, const JobShape& shape, Time t) const {
    const std::uint32_t w = node_window.empty() ? kNone : node_window[n];
    const bool flex = shape.reservation != kNone && IsFlexWindow(shape.reservation);
    if (w == kNone) return shape.reservation == kNone || flex ? t : kInfiniteTime;
    const Window& win = s.windows[w];
    if (shape.reservation == win.id) return t < win.end || flex ? t : kInfiniteTime;
    return std::max(t, win.end);
  }
  std::vector<std::uint32_t> flex_windows;  // ids of the FLEX windows, sorted
  bool IsFlexWindow(std::uint32_t id) const {
    return !flex_windows.empty() &&
           std::binary_search(flex_windows.begin(), flex_windows.end(), id);
  }
  bool WindowAllows(std::uint32_t n, const JobShape& shape, Time t) const {
    return WindowFrom(n, shape, t) == t;
  }
};

}  // namespace lockstep::engine
