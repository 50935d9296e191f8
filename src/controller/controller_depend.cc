// Dependencies that the engine cannot follow from the spec alone.
//
// aftercorr (Slurm's --dependency=aftercorr:ARRAY): task i of a dependent array waits for task i
// of the target array to complete successfully. When a dependent task is split off its array
// (SplitOffLocked), the controller finds that task and gives the dependent a spec of its own in
// which the dependency is an afterok on the task's job id; a target task still in its array's
// record is split off with it, so the scheduler knows the job it waits for, and from then on
// the dependency is an ordinary one (kept across restarts in the task's record, its target kept
// through the purge while it waits). A target array without an index i, or whose task is long
// gone, lifts the dependency, as slurmctld lifts one on a job it no longer knows. A dependent
// that is not an array task waits for ARRAY as afterok (job_convert.cc).
//
// after:ID+MIN counts from when the target started (or, cancelled while pending, ended):
// DependencySince gives the scheduler that time for the jobs it keeps as finished.
#include <algorithm>

#include "controller/controller.h"
#include "controller/controller_internal.h"

namespace lockstep::controller {

Time DependencySince(const JobEntry& e) {
  return e.start_time > 0 ? e.start_time : e.end_time;
}

std::optional<JobId> Controller::CorrespondingTaskLocked(JobId array, std::uint32_t index) const {
  if (auto rest = pending_arrays_.find(array); rest != pending_arrays_.end())
    return rest->second.IdOfTask(index);
  // Every task split off: they are the entries from the array's id on, in index order.
  for (auto it = jobs_.lower_bound(array); it != jobs_.end(); ++it) {
    const JobEntry& task = it->second;
    if (!task.is_array_task() || task.array_job_id != array) break;
    if (task.array_task_id == index) return it->first;
    if (task.array_task_id > index) break;
  }
  return std::nullopt;
}

void Controller::ResolveCorrespondingLocked(JobEntry& dependent,
                                            std::vector<store::Record>& records) {
  if (!dependent.is_array_task() || !dependent.spec) return;
  const auto& deps = dependent.spec->dependencies;
  if (std::none_of(deps.begin(), deps.end(), [](const jobspec::DependencySpec& d) {
        return d.type == jobspec::DependencyType::kAfterCorr;
      }))
    return;
  jobspec::JobSpec own = *dependent.spec;
  bool lifted = false;  // a dependency with nothing to wait for
  std::vector<jobspec::DependencySpec> resolved;
  for (jobspec::DependencySpec d : own.dependencies) {
    if (d.type != jobspec::DependencyType::kAfterCorr) {
      resolved.push_back(d);
      continue;
    }
    const bool array = pending_arrays_.count(d.job) > 0 ||
                       (jobs_.count(d.job) > 0 && jobs_.at(d.job).is_array_task());
    if (!array) {  // not an array (or gone): as afterok on the job itself
      d.type = jobspec::DependencyType::kAfterOk;
      resolved.push_back(d);
      continue;
    }
    std::optional<JobId> task = CorrespondingTaskLocked(d.job, dependent.array_task_id);
    if (!task) {
      lifted = true;
      continue;
    }
    auto rest = pending_arrays_.find(d.job);
    if (rest != pending_arrays_.end() && rest->second.Holds(*task)) {
      SplitOffLocked(rest->second, *task, records);
      records.push_back(PendingArrayRecordLocked(rest->second));
      if (rest->second.empty()) pending_arrays_.erase(rest);
    }
    resolved.push_back({jobspec::DependencyType::kAfterOk, *task, 0, false, 0});
  }
  // Joined with '?', one dependency met is enough: a lifted one meets the whole.
  own.dependencies = own.dependencies_any && lifted ? std::vector<jobspec::DependencySpec>{}
                                                    : std::move(resolved);
  dependent.spec = specs_.Intern(std::move(own));
}

}  // namespace lockstep::controller
