// Whether a pending job may be considered at all: holds, begin time, dependencies and array
// throttles, with Slurm's pending reasons.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "engine/model.h"

namespace lockstep::engine {

// Lookups over the snapshot that dependencies and singletons need. Built once per pass.
class EligibilityIndex {
 public:
  explicit EligibilityIndex(const Snapshot& s);

  // JobHeldUser/Admin, BeginTime, Dependency, DependencyNeverSatisfied, JobArrayTaskLimit, or
  // kNone when the job may be scheduled.
  PendingReason Check(const Job& job, Time now) const;

  // A task of this array started in this pass.
  void NoteArrayTaskStarted(JobId array_job_id) { ++array_running_[array_job_id]; }

 private:
  enum class TargetState : std::uint8_t { kPending, kRunning, kCompleted, kFailed, kCancelled };
  // 1 satisfied, 0 waiting, -1 never.
  int Evaluate(const Dependency& d, const Job& job) const;

  std::unordered_map<JobId, TargetState> state_;
  // (user, name) -> running jobs and the smallest pending id, for singleton.
  struct SingletonInfo {
    int running = 0;
    JobId first_pending = 0;
  };
  std::unordered_map<std::string, SingletonInfo> singleton_;
  std::unordered_map<JobId, std::uint32_t> array_running_;
};

}  // namespace lockstep::engine
