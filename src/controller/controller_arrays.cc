// Job arrays: a pending array is one record however many tasks it has (pending_array.h), and
// tasks are split off into JobEntries of their own as the scheduler is to see them, as a job's
// dependency names them, or as a user acts on one. So a 4,000,000-task array costs lockstepd,
// the store and the engine about what one job costs until its tasks start.
#include <algorithm>

#include "controller/controller.h"
#include "controller/controller_internal.h"

namespace lockstep::controller {
namespace {

// The most split-off pending tasks one array offers the scheduler at a time. The window starts
// at one task and doubles while every task in it starts, so a pass can start many tasks of an
// array on a large cluster, and an array that waits costs one task.
constexpr std::size_t kArrayWindowMax = 1024;
// An array whose tasks wait on another's (aftercorr) offers this many at once, each waiting for
// its own target, as slurmctld splits up to correspond_after_task_cnt (10) such tasks.
constexpr std::size_t kCorrespondWindow = 10;

bool WaitsOnCorrespondingTasks(const PendingArray& a) {
  if (!a.tmpl().spec) return false;
  const auto& deps = a.tmpl().spec->dependencies;
  return std::any_of(deps.begin(), deps.end(), [](const jobspec::DependencySpec& d) {
    return d.type == jobspec::DependencyType::kAfterCorr;
  });
}

}  // namespace

PendingArray* Controller::PendingArrayOfLocked(JobId id) {
  auto it = pending_arrays_.upper_bound(id);
  if (it == pending_arrays_.begin()) return nullptr;
  PendingArray& a = std::prev(it)->second;
  return a.Holds(id) ? &a : nullptr;
}

const PendingArray* Controller::PendingArrayOfLocked(JobId id) const {
  return const_cast<Controller*>(this)->PendingArrayOfLocked(id);
}

store::Record Controller::PendingArrayRecordLocked(const PendingArray& a) {
  // The template names the array's stored spec until an update changes it (controller_update.cc).
  auto stored = array_specs_.find(a.array_id());
  if (stored != array_specs_.end() && stored->second == a.tmpl().spec)
    return {"pending_arrays", JobKey(a.array_id()), a.ToJson()};
  return {"pending_arrays", JobKey(a.array_id()), a.ToJson(*specs_.JsonOf(a.tmpl().spec))};
}

JobEntry& Controller::SplitOffLocked(PendingArray& a, JobId id,
                                     std::vector<store::Record>& records) {
  JobEntry& e = jobs_.emplace(id, a.Take(id)).first->second;
  ResolveCorrespondingLocked(e, records);
  records.push_back({"jobs", JobKey(id), RecordOfLocked(e)});
  TouchLocked(e);
  return e;
}

store::PendingWrite Controller::QueueWriteLocked(std::vector<store::Record> records) {
  store::PendingWrite write = store_->PutAsync(std::move(records));
  outbox_.push_back({write, std::nullopt});
  ++outbox_queued_;
  outbox_changed_.notify_all();
  return write;
}

JobEntry& Controller::SplitTaskLocked(PendingArray& a, JobId id) {
  std::vector<store::Record> records;
  JobEntry& e = SplitOffLocked(a, id, records);
  // The task's record and the array's, in one transaction: a task is never in both, or lost.
  records.push_back(PendingArrayRecordLocked(a));
  const JobId array = a.array_id();
  if (a.empty()) pending_arrays_.erase(array);
  QueueWriteLocked(std::move(records));
  return e;
}

void Controller::SplitArrayWindowsLocked() {
  std::vector<store::Record> records;
  bool started = false;
  for (auto it = pending_arrays_.begin(); it != pending_arrays_.end();) {
    PendingArray& a = it->second;
    std::vector<JobId>& window = a.window();
    const std::size_t before = window.size();
    std::erase_if(window, [&](JobId id) {
      auto e = jobs_.find(id);
      return e == jobs_.end() || e->second.state != JobState::kPending;
    });
    const std::size_t left = before - window.size();  // started (or cancelled) since
    std::size_t target = 0;
    if (left > 0) target = std::clamp<std::size_t>(2 * left, 1, kArrayWindowMax);
    if (window.empty()) target = std::max<std::size_t>(target, 1);
    if (WaitsOnCorrespondingTasks(a)) target = std::max(target, kCorrespondWindow);
    const std::size_t first = records.size();
    while (window.size() < target && !a.empty()) {
      const JobId id = a.FirstPendingId();
      SplitOffLocked(a, id, records);
      window.push_back(id);
    }
    if (records.size() > first) {
      records.push_back(PendingArrayRecordLocked(a));
      started = started || left > 0;
    }
    it = a.empty() ? pending_arrays_.erase(it) : std::next(it);
  }
  if (records.empty()) return;
  QueueWriteLocked(std::move(records));
  // The tasks just split off may start at once: another pass, as Slurm's scheduler tries an
  // array again after starting one of its tasks.
  if (started) RequestPassLocked();
}

nlohmann::json Controller::PendingArrayJsonLocked(const PendingArray& a) const {
  nlohmann::json j = JobJsonLocked(a.EntryOf(a.FirstPendingId()));
  j["job_id"] = a.array_id();
  j.erase("array_task_id");
  // As docs/api.md has it and squeue prints it: "[5-3999999%10]".
  const jobspec::JobSpec& spec = *a.tmpl().spec;
  const std::uint32_t throttle = spec.array ? spec.array->max_running : 0;
  j["array_task_str"] =
      "[" + a.TaskText() + (throttle > 0 ? "%" + std::to_string(throttle) : "") + "]";
  j["array_tasks_pending"] = a.pending_count();
  j["array_rest"] = true;  // the array's tasks not split off: act on them with "array_rest"
  // Why they wait: their hold, else what the last pass said of the array's next task.
  const JobEntry& t = a.tmpl();
  if (t.state == JobState::kPending) {
    std::string reason = t.held_by_admin ? "JobHeldAdmin" : t.held_by_user ? "JobHeldUser" : "";
    for (JobId id : a.window()) {
      auto e = jobs_.find(id);
      if (!reason.empty() || e == jobs_.end() || e->second.state != JobState::kPending) continue;
      reason = e->second.reason;
      j["priority"] = e->second.priority;
      j["expected_start"] = e->second.expected_start;
    }
    j["reason"] = reason.empty() ? "None" : reason;
  }
  return j;
}

Status Controller::ArrayRestAction(const Caller& caller, JobId array, const std::string& action) {
  if (action != "cancel" && action != "hold" && action != "release")
    return InvalidArgument("array_rest: unknown action " + action);
  store::PendingWrite write;
  {
    HeldLock lock(*this);
    auto it = pending_arrays_.find(array);
    if (it == pending_arrays_.end())
      return NotFound("invalid job id specified: " + std::to_string(array) +
                      " has no pending array tasks");
    PendingArray& a = it->second;
    LOCKSTEP_RETURN_IF_ERROR(CheckOwner(caller, a.tmpl()));
    JobEntry& t = a.mutable_tmpl();
    if (action == "release" && t.held_by_admin && !IsOperator(caller.uid))
      return PermissionDenied("job " + std::to_string(array) +
                              " was held by an operator; only an operator may release it");
    if (action == "cancel") {
      // The tasks split off for the scheduler that have not started end with the rest, and
      // the tasks never split off end as one record, as Slurm's array record does.
      for (JobId id : a.window()) {
        auto e = jobs_.find(id);
        if (e != jobs_.end() && e->second.state == JobState::kPending) CancelLocked(e->second);
      }
      t.state = JobState::kCancelled;
      t.end_time = clock_.Now();
      t.reason = "None";
      write = QueueWriteLocked({PendingArrayRecordLocked(a)});
      cancelled_arrays_.insert({array, std::move(a)});
      pending_arrays_.erase(it);
    } else {
      write = HoldArrayRestLocked(caller, a, action == "hold");
    }
    RequestPassLocked();
  }
  return Durable(std::move(write));
}

store::PendingWrite Controller::HoldArrayRestLocked(const Caller& caller, PendingArray& a,
                                                    bool hold) {
  JobEntry& t = a.mutable_tmpl();
  const bool admin = hold && IsOperator(caller.uid) && caller.uid != t.uid;
  auto apply = [&](JobEntry& e) {
    if (hold) {
      (admin ? e.held_by_admin : e.held_by_user) = true;
      e.reason = admin ? "JobHeldAdmin" : "JobHeldUser";
    } else {
      e.held_by_user = e.held_by_admin = false;
      e.special_exit = false;
    }
    e.requeue_held = false;
  };
  apply(t);
  std::vector<store::Record> records = {PendingArrayRecordLocked(a)};
  // The tasks split off for the scheduler are, with the rest, the array's pending tasks.
  for (JobId id : a.window()) {
    auto e = jobs_.find(id);
    if (e == jobs_.end() || e->second.state != JobState::kPending) continue;
    apply(e->second);
    TouchLocked(e->second);
    records.push_back({"jobs", JobKey(id), RecordOfLocked(e->second)});
  }
  return QueueWriteLocked(std::move(records));
}

Status Controller::RecoverPendingArraysLocked(const std::vector<store::Record>& records) {
  for (const store::Record& r : records) {
    Result<PendingArray> a = PendingArray::FromJson(r.value);
    if (!a.ok()) return Internal("store: pending array " + r.key + ": " + a.status().message());
    auto spec = array_specs_.find(a->array_id());
    if (spec == array_specs_.end())
      return Internal("store: pending array " + r.key + ": its array's spec is missing");
    // Its own spec when an update changed it, else the array's as submitted.
    const auto& own = a->tmpl().spec;
    a->mutable_tmpl().spec = own ? specs_.Intern(*own) : spec->second;
    next_job_id_ = std::max(next_job_id_, a->last_id() + 1);
    const JobId id = a->array_id();
    if (IsFinished(a->tmpl().state))
      cancelled_arrays_.insert({id, std::move(*a)});
    else if (!a->empty())
      pending_arrays_.insert({id, std::move(*a)});
  }
  // The split-off tasks still pending are the arrays' windows again.
  for (auto& [id, a] : pending_arrays_) {
    for (auto e = jobs_.lower_bound(a.array_id()); e != jobs_.end() && e->first <= a.last_id(); ++e)
      if (e->second.state == JobState::kPending && e->second.array_job_id == id)
        a.window().push_back(e->first);
  }
  return Status::Ok();
}

Result<JobId> Controller::ArrayTaskJobId(JobId array, std::uint64_t task) const {
  HeldLock lock(*this);
  auto not_found = [&] {
    return NotFound("invalid job id specified: " + std::to_string(array) + "_" +
                    std::to_string(task));
  };
  if (task > 0xFFFFFFFFu) return not_found();
  for (const auto* arrays : {&pending_arrays_, &cancelled_arrays_}) {
    auto it = arrays->find(array);
    if (it == arrays->end()) continue;
    std::optional<JobId> id = it->second.IdOfTask(static_cast<std::uint32_t>(task));
    if (!id) return not_found();
    return *id;
  }
  // Every task split off: task ids follow the array's id, one per task, in index order.
  for (auto it = jobs_.lower_bound(array); it != jobs_.end() && it->second.array_job_id == array;
       ++it)
    if (it->second.array_task_id == task) return it->first;
  return not_found();
}

std::pair<std::size_t, std::size_t> Controller::SchedulerJobsForTest() const {
  HeldLock lock(*this);
  return replayed_jobs_;
}

}  // namespace lockstep::controller
