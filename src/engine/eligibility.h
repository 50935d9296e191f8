// Whether a pending job may be considered at all: holds, begin time, dependencies and array
// throttles, with Slurm's pending reasons.
#pragma once

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/model.h"

namespace lockstep::engine {

// Lookups over the jobs that dependencies, singletons and array throttles need. plan() builds
// one per pass from the Snapshot; the Scheduler keeps one and tells it of every job that comes
// and goes. Dependencies are tracked only once some pending job has one (TrackDependencies):
// until then only array tasks are counted. Not thread-safe.
class EligibilityIndex {
 public:
  explicit EligibilityIndex(const Snapshot& s);

  // JobHeldUser/Admin, BeginTime, Dependency, DependencyNeverSatisfied, JobArrayTaskLimit, or
  // kNone when the job may be scheduled. `array_started` tasks of the job's array started
  // earlier in the same pass.
  PendingReason Check(const Job& job, Time now, std::uint32_t array_started = 0) const;

  // ---- Upkeep between passes (Scheduler) ----
  bool tracks_dependencies() const { return tracking_; }
  // Starts tracking dependencies over every job of `s`.
  void TrackDependencies(const Snapshot& s);
  void AddPending(const Job& j);
  void RemovePending(const Job& j);
  void AddRunning(const Job& j);
  void RemoveRunning(const Job& j);
  void AddFinished(const FinishedJob& f);
  void RemoveFinished(JobId id);

 private:
  enum class TargetState : std::uint8_t { kPending, kRunning, kCompleted, kFailed, kCancelled };
  static TargetState Ended(Outcome o);
  static std::string SingletonKey(const Job& j);
  // 1 satisfied, 0 waiting, -1 never.
  int Evaluate(const Dependency& d, const Job& job, Time now) const;

  // A job dependencies may name: its state, and when it started (or, never started, ended),
  // which after:ID+MIN counts from.
  struct Target {
    TargetState state = TargetState::kPending;
    Time since = 0;
  };
  bool tracking_ = false;
  std::unordered_map<JobId, Target> state_;
  // (user, name) -> running jobs and the pending ids, for singleton.
  struct SingletonInfo {
    int running = 0;
    std::set<JobId> pending;
  };
  std::unordered_map<std::string, SingletonInfo> singleton_;
  std::unordered_map<JobId, std::uint32_t> array_running_;
};

}  // namespace lockstep::engine
