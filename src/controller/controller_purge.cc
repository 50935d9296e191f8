// Finished jobs leave lockstepd's memory MinJobAge after they end, as slurmctld purges them
// (about 4 KiB a job otherwise, without end). The store keeps every record: sacct, dependencies,
// `lockstep why` and the web view read a purged job from there (controller_history.cc), while
// squeue and scontrol show job no longer know it, as Slurm's do not.
//
// A job is forgotten only once its final record is durable: the purge chooses the jobs, notes
// the outbox's length, and forgets them when the dispatcher has carried out every entry queued
// before (each waits for its write), at once when the outbox is empty.
#include <limits>

#include "controller/controller.h"
#include "controller/controller_internal.h"

namespace lockstep::controller {

void Controller::NoteForPurgeLocked(const JobEntry& job) {
  if (IsFinished(job.state)) finished_order_.emplace_back(job.end_time, job.id);
  if (job.state == JobState::kPending && job.spec && !job.spec->dependencies.empty())
    dependents_.insert(job.id);
  else
    dependents_.erase(job.id);
}

std::unordered_set<JobId> Controller::AwaitedTargetsLocked() const {
  std::unordered_set<JobId> awaited;
  auto add = [&](const jobspec::JobSpec& spec) {
    for (const jobspec::DependencySpec& d : spec.dependencies)
      if (d.type != jobspec::DependencyType::kSingleton) awaited.insert(d.job);
  };
  for (JobId id : dependents_) {
    auto it = jobs_.find(id);
    if (it == jobs_.end() || it->second.state != JobState::kPending) continue;
    add(*it->second.spec);
  }
  // An array's tasks not split off yet wait for what the array's spec names.
  for (const auto& [id, a] : pending_arrays_)
    if (a.tmpl().spec) add(*a.tmpl().spec);
  return awaited;
}

std::optional<JobState> Controller::EndedTargetLocked(JobId id) const {
  auto it = jobs_.find(id);
  if (it != jobs_.end())
    return IsFinished(it->second.state) ? std::optional<JobState>(it->second.state) : std::nullopt;
  auto kept = purged_targets_.find(id);
  if (kept != purged_targets_.end()) return kept->second;
  return std::nullopt;
}

void Controller::PurgeFinishedJobsLocked(Time now) {
  if (!purging_.empty()) {
    if (outbox_done_ < purge_after_) return;  // their final records are not all durable yet
  } else {
    const Seconds age = cluster_.policy.min_job_age;
    while (!finished_order_.empty() && now - finished_order_.front().first > age) {
      const auto [end, id] = finished_order_.front();
      finished_order_.pop_front();
      auto it = jobs_.find(id);
      // Only its latest entry counts (a job is filed each time it is touched once finished).
      if (it != jobs_.end() && IsFinished(it->second.state) && it->second.end_time == end)
        purging_.push_back(id);
    }
    if (purging_.empty()) return;
    purge_after_ = outbox_queued_;
    if (outbox_done_ < purge_after_) return;  // the next turn forgets them
  }
  const std::unordered_set<JobId> awaited = AwaitedTargetsLocked();
  for (JobId id : purging_) ForgetJobLocked(id, awaited);
  purging_.clear();
  std::erase_if(purged_targets_, [&](const auto& kv) { return !awaited.count(kv.first); });
}

void Controller::ForgetJobLocked(JobId id, const std::unordered_set<JobId>& awaited) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || !IsFinished(it->second.state)) return;
  // A pending job still waits for it: its dependents are placed with its outcome (PlaceJobLocked)
  // and the scheduler keeps it while they wait.
  if (awaited.count(id)) purged_targets_[id] = it->second.state;
  jobs_.erase(it);
  for (auto s = steps_.lower_bound({id, std::numeric_limits<std::int32_t>::min()});
       s != steps_.end() && s->first.first == id;)
    s = steps_.erase(s);
  // The next replay takes it out of the scheduler (which keeps an awaited one's outcome) and
  // out of the metrics' counts, as slurmctld's counts drop when it purges.
  dirty_.insert(id);
}

}  // namespace lockstep::controller
