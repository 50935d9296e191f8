// The scheduler's own engine::Snapshot, kept in step with the controller's jobs by replaying
// only the jobs that changed since the last pass. Rebuilding a Snapshot from every job costs a
// copy of every pending job per pass; with a million pending that is most of the pass and most
// of the memory (DESIGN.md: plan incrementally where the snapshot changed little).
//
// Owned by the scheduling thread: the controller records which jobs changed under its lock and
// the scheduling thread replays them here before planning without the lock.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/model.h"

namespace lockstep::controller {

class IncrementalSnapshot {
 public:
  // `base`: the cluster (nodes, partitions, QoS, accounts); its job lists are dropped.
  explicit IncrementalSnapshot(engine::Snapshot base);

  // Puts `job` in the pending list, replacing what was known of it.
  void SetPending(engine::Job job);
  // Puts `job` (with its allocation) in the running list.
  void SetRunning(engine::Job job);
  // Records how `id` ended, for the dependencies of others.
  void SetFinished(JobId id, engine::Outcome outcome);
  // Forgets `id` (a job that is no longer known at all).
  void Remove(JobId id);

  const engine::Snapshot& snapshot() const { return s_; }
  // The parts that are not jobs (node states, the clock, associations) are set directly.
  engine::Snapshot& cluster() { return s_; }

  // One line per job, in id order, of what the engine sees of it: to compare with a snapshot
  // built from scratch (the controller's self-check).
  static std::vector<std::string> Describe(const engine::Snapshot& s);

 private:
  enum class List : std::uint8_t { kPending, kRunning, kFinished };
  struct Slot {
    List list;
    std::uint32_t index;
  };
  template <typename T>
  void Place(std::vector<T>& v, List list, JobId id, T value);
  template <typename T>
  void Unplace(std::vector<T>& v, std::uint32_t index);

  engine::Snapshot s_;
  std::unordered_map<JobId, Slot> slots_;
};

}  // namespace lockstep::controller
