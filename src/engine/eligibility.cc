#include "engine/eligibility.h"

#include <algorithm>

namespace lockstep::engine {
namespace {

std::string SingletonKey(const Job& j) {
  return std::to_string(j.user) + '\x1f' + j.name;
}

}  // namespace

EligibilityIndex::EligibilityIndex(const Snapshot& s) {
  bool any_singleton = false, any_dependency = false;
  for (const Job& j : s.pending) {
    any_dependency |= !j.dependencies.empty();
    for (const Dependency& d : j.dependencies)
      any_singleton |= d.kind == DependencyKind::kSingleton;
  }
  // Without dependencies only array throttles need the running jobs.
  if (!any_dependency) {
    for (const Job& j : s.running)
      if (j.array_job_id != 0) ++array_running_[j.array_job_id];
    return;
  }
  for (const FinishedJob& f : s.finished) {
    state_[f.id] = f.outcome == Outcome::kCompleted ? TargetState::kCompleted
                   : f.outcome == Outcome::kFailed  ? TargetState::kFailed
                                                    : TargetState::kCancelled;
  }
  for (const Job& j : s.running) {
    state_[j.id] = TargetState::kRunning;
    if (j.array_job_id != 0) ++array_running_[j.array_job_id];
    if (any_singleton) ++singleton_[SingletonKey(j)].running;
  }
  for (const Job& j : s.pending) {
    if (!j.dependencies.empty()) state_.try_emplace(j.id, TargetState::kPending);
    if (any_singleton) {
      SingletonInfo& info = singleton_[SingletonKey(j)];
      if (info.first_pending == 0 || j.id < info.first_pending) info.first_pending = j.id;
    }
  }
  // Pending targets of dependencies must be known as pending even when they have none.
  if (!state_.empty()) {
    for (const Job& j : s.pending) state_.try_emplace(j.id, TargetState::kPending);
  }
}

int EligibilityIndex::Evaluate(const Dependency& d, const Job& job) const {
  if (d.kind == DependencyKind::kSingleton) {
    auto it = singleton_.find(SingletonKey(job));
    if (it == singleton_.end()) return 1;
    return it->second.running == 0 && it->second.first_pending == job.id ? 1 : 0;
  }
  auto it = state_.find(d.target);
  // A target the snapshot no longer knows ended long ago: Slurm treats after/afterany as met,
  // and cannot tell whether it succeeded.
  if (it == state_.end())
    return d.kind == DependencyKind::kAfter || d.kind == DependencyKind::kAfterAny ? 1 : -1;
  TargetState t = it->second;
  bool ended =
      t == TargetState::kCompleted || t == TargetState::kFailed || t == TargetState::kCancelled;
  switch (d.kind) {
    case DependencyKind::kAfter:
      return t == TargetState::kPending ? 0 : 1;
    case DependencyKind::kAfterAny:
      return ended ? 1 : 0;
    case DependencyKind::kAfterOk:
      if (!ended) return 0;
      return t == TargetState::kCompleted ? 1 : -1;
    case DependencyKind::kAfterNotOk:
      if (!ended) return 0;
      return t == TargetState::kCompleted ? -1 : 1;
    case DependencyKind::kSingleton:
      break;
  }
  return 1;
}

PendingReason EligibilityIndex::Check(const Job& job, Time now) const {
  if (job.held_by_admin) return PendingReason::kJobHeldAdmin;
  if (job.held_by_user) return PendingReason::kJobHeldUser;
  if (!job.dependencies.empty()) {
    bool all = true, any = false, never_all = false, never_any = true;
    for (const Dependency& d : job.dependencies) {
      int r = Evaluate(d, job);
      all &= r == 1;
      any |= r == 1;
      never_all |= r == -1;
      never_any &= r == -1;
    }
    if (job.dependencies_any) {
      if (!any)
        return never_any ? PendingReason::kDependencyNeverSatisfied : PendingReason::kDependency;
    } else if (!all) {
      return never_all ? PendingReason::kDependencyNeverSatisfied : PendingReason::kDependency;
    }
  }
  if (job.begin_time > now) return PendingReason::kBeginTime;
  if (job.array_job_id != 0 && job.array_max_running > 0) {
    auto it = array_running_.find(job.array_job_id);
    if (it != array_running_.end() && it->second >= job.array_max_running)
      return PendingReason::kJobArrayTaskLimit;
  }
  return PendingReason::kNone;
}

}  // namespace lockstep::engine
