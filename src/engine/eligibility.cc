#include "engine/eligibility.h"

#include <algorithm>

namespace lockstep::engine {

std::string EligibilityIndex::SingletonKey(const Job& j) {
  return std::to_string(j.user) + '\x1f' + j.name;
}

EligibilityIndex::TargetState EligibilityIndex::Ended(Outcome o) {
  return o == Outcome::kCompleted ? TargetState::kCompleted
         : o == Outcome::kFailed  ? TargetState::kFailed
                                  : TargetState::kCancelled;
}

EligibilityIndex::EligibilityIndex(const Snapshot& s) {
  for (const Job& j : s.running)
    if (j.array_job_id != 0) ++array_running_[j.array_job_id];
  // Without dependencies only array throttles need the running jobs.
  bool any_dependency = std::any_of(s.pending.begin(), s.pending.end(),
                                    [](const Job& j) { return !j.dependencies.empty(); });
  if (any_dependency) TrackDependencies(s);
}

void EligibilityIndex::TrackDependencies(const Snapshot& s) {
  tracking_ = true;
  state_.clear();
  singleton_.clear();
  for (const FinishedJob& f : s.finished) state_[f.id] = {Ended(f.outcome), f.since};
  for (const Job& j : s.running) {
    state_[j.id] = {TargetState::kRunning, j.start_time};
    ++singleton_[SingletonKey(j)].running;
  }
  for (const Job& j : s.pending) {
    state_.try_emplace(j.id, Target{});
    singleton_[SingletonKey(j)].pending.insert(j.id);
  }
}

void EligibilityIndex::AddPending(const Job& j) {
  if (!tracking_) return;
  state_[j.id] = {};
  singleton_[SingletonKey(j)].pending.insert(j.id);
}

void EligibilityIndex::RemovePending(const Job& j) {
  if (!tracking_) return;
  state_.erase(j.id);
  auto it = singleton_.find(SingletonKey(j));
  if (it == singleton_.end()) return;
  it->second.pending.erase(j.id);
  if (it->second.pending.empty() && it->second.running == 0) singleton_.erase(it);
}

void EligibilityIndex::AddRunning(const Job& j) {
  if (j.array_job_id != 0) ++array_running_[j.array_job_id];
  if (!tracking_) return;
  state_[j.id] = {TargetState::kRunning, j.start_time};
  ++singleton_[SingletonKey(j)].running;
}

void EligibilityIndex::RemoveRunning(const Job& j) {
  if (j.array_job_id != 0) {
    auto a = array_running_.find(j.array_job_id);
    if (a != array_running_.end() && --a->second == 0) array_running_.erase(a);
  }
  if (!tracking_) return;
  state_.erase(j.id);
  auto it = singleton_.find(SingletonKey(j));
  if (it == singleton_.end()) return;
  --it->second.running;
  if (it->second.pending.empty() && it->second.running == 0) singleton_.erase(it);
}

void EligibilityIndex::AddFinished(const FinishedJob& f) {
  if (tracking_) state_[f.id] = {Ended(f.outcome), f.since};
}

void EligibilityIndex::RemoveFinished(JobId id) {
  if (tracking_) state_.erase(id);
}

int EligibilityIndex::Evaluate(const Dependency& d, const Job& job, Time now) const {
  if (d.kind == DependencyKind::kSingleton) {
    auto it = singleton_.find(SingletonKey(job));
    if (it == singleton_.end()) return 1;
    const SingletonInfo& info = it->second;
    return info.running == 0 && !info.pending.empty() && *info.pending.begin() == job.id ? 1 : 0;
  }
  auto it = state_.find(d.target);
  // A target the snapshot no longer knows ended long ago: Slurm treats after/afterany as met,
  // and cannot tell whether it succeeded.
  if (it == state_.end())
    return d.kind == DependencyKind::kAfter || d.kind == DependencyKind::kAfterAny ? 1 : -1;
  const TargetState t = it->second.state;
  bool ended =
      t == TargetState::kCompleted || t == TargetState::kFailed || t == TargetState::kCancelled;
  switch (d.kind) {
    case DependencyKind::kAfter:
      if (t == TargetState::kPending) return 0;
      return now >= it->second.since + d.delay ? 1 : 0;
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

PendingReason EligibilityIndex::Check(const Job& job, Time now, std::uint32_t array_started) const {
  if (job.held_by_admin) return PendingReason::kJobHeldAdmin;
  if (job.held_by_user) return PendingReason::kJobHeldUser;
  if (!job.dependencies.empty()) {
    bool all = true, any = false, never_all = false, never_any = true;
    for (const Dependency& d : job.dependencies) {
      int r = Evaluate(d, job, now);
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
    std::uint32_t running = (it == array_running_.end() ? 0 : it->second) + array_started;
    if (running >= job.array_max_running) return PendingReason::kJobArrayTaskLimit;
  }
  return PendingReason::kNone;
}

}  // namespace lockstep::engine
