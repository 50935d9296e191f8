// scontrol update JobId=...: a job's time limit, priority, nice and name. A job id that is an
// array's id changes every task of the array not finished, as Slurm's does ("scontrol update
// job=101" is the whole array, "job=101_1" one task): the running tasks, the pending ones split
// off, and the tasks still in the array's one record (pending_array.h), which are split off with
// the new values. Every task is checked before any changes, and all of them are one write.
// A pending job's account may change to another of its user's associations (account_access.h);
// the other fields only a pending job may change are controller_update_pending.cc's. Comment may
// change while the job runs, as Slurm's.
#include <fmt/format.h>

#include <map>
#include <optional>

#include "controller/account_access.h"
#include "controller/controller.h"
#include "policy/policy_gate.h"
#include "controller/controller_internal.h"
#include "controller/job_changes.h"
#include "controller/job_convert.h"
#include "engine/request.h"
#include "jobspec/validate.h"

namespace lockstep::controller {

Result<Controller::JobChanges> Controller::DecodeChanges(const nlohmann::json& body, bool op) {
  if (!body.is_object()) return InvalidArgument("update: the body must be an object");
  JobChanges c;
  for (const auto& [key, value] : body.items()) {
    if (key == "time_limit") {
      if (!value.is_number_integer() || value.get<std::int64_t>() <= 0 ||
          value.get<std::int64_t>() >= kUnlimited)
        return InvalidArgument("update: time_limit must be a positive number of seconds");
      c.time_limit = value.get<Seconds>();
    } else if (key == "time_limit_add") {
      if (!value.is_number_integer() || value.get<std::int64_t>() <= -kUnlimited ||
          value.get<std::int64_t>() >= kUnlimited)
        return InvalidArgument("update: time_limit_add must be a number of seconds");
      c.time_limit_add = value.get<Seconds>();
    } else if (key == "priority") {
      if (!op) return PermissionDenied("update: only an operator may set a priority");
      if (!value.is_number_unsigned() || value.get<std::uint64_t>() > 0xFFFFFFFEu)
        return InvalidArgument("update: priority must be an integer from 0 to 4294967294");
      c.priority = value.get<std::uint32_t>();
    } else if (key == "nice") {
      constexpr std::int64_t kMaxNice = 2147483645;  // Slurm's NICE_OFFSET - 3
      if (!value.is_number_integer() || value.get<std::int64_t>() < -kMaxNice ||
          value.get<std::int64_t>() > kMaxNice)
        return InvalidArgument("update: nice must be an integer from -2147483645 to 2147483645");
      if (value.get<std::int64_t>() < 0 && !op)
        return PermissionDenied("update: only an operator may set a negative nice");
      c.nice = value.get<int>();
    } else if (key == "name" && value.is_string()) {
      c.name = value.get<std::string>();
    } else if (key == "account" && value.is_string()) {
      c.account = value.get<std::string>();
    } else if (key == "comment" && value.is_string()) {
      LOCKSTEP_RETURN_IF_ERROR(jobspec::CheckSize("the comment", value.get<std::string>().size(),
                                                  "", jobspec::kMaxShortText));
      c.comment = value.get<std::string>();
    } else {
      Result<bool> pending = DecodePendingChange(key, value, c.pending);
      if (!pending.ok()) return pending.status();
      if (!*pending) return InvalidArgument("update: '" + key + "' cannot be changed");
    }
  }
  if (c.time_limit && c.time_limit_add)
    return InvalidArgument("update: time_limit and time_limit_add together");
  return c;
}

namespace {

// COMPLETING is finished for an update, as Slurm's "already completing or completed".
bool Updatable(const JobEntry& e) {
  return !IsFinished(e.state) && e.state != JobState::kCompleting;
}

}  // namespace

Status Controller::Update(const Caller& caller, JobId id, const nlohmann::json& changes) {
  return UpdateJobs(caller, id, changes, /*whole_array=*/true);
}

Status Controller::UpdateTask(const Caller& caller, JobId id, const nlohmann::json& changes) {
  return UpdateJobs(caller, id, changes, /*whole_array=*/false);
}

Status Controller::UpdateJobs(const Caller& caller, JobId id, const nlohmann::json& body,
                              bool whole_array) {
  const bool op = IsOperator(caller.uid);
  Result<JobChanges> changes = DecodeChanges(body, op);
  if (!changes.ok()) return changes.status();
  const JobChanges& c = *changes;
  // Dependencies on jobs purged from memory are read from the store before the lock.
  StoredTargets stored;
  if (c.pending.dependencies) {
    jobspec::JobSpec wanted;
    wanted.dependencies = c.pending.dependencies->first;
    Result<StoredTargets> read = ReadStoredTargets(wanted);
    if (!read.ok()) return read.status();
    stored = std::move(*read);
  }
  // The policy judges every changed spec under the lock (Decide is pure); the decisions are
  // logged once it is released, whether the update goes through or not.
  policy::PolicyGate* gate = policy_.load();
  struct Judged {
    policy::PolicyGate* gate;
    std::vector<std::pair<policy::Request, policy::Decision>> decisions;
    ~Judged() {
      for (const auto& [r, d] : decisions) gate->Record(r, d);
    }
  } judged{gate, {}};
  store::PendingWrite write;
  {
    HeldLock lock(*this);
    Result<UpdateTargets> found = UpdateTargetsLocked(id, whole_array);
    if (!found.ok()) return found.status();
    std::vector<JobEntry*>& targets = found->jobs;
    PendingArray* rest = found->rest;
    // Every entry is checked before any changes. Tasks share their spec, so the new spec is
    // made once per spec they had (the time limit checked against that spec's limit).
    std::map<const jobspec::JobSpec*, std::shared_ptr<const jobspec::JobSpec>> new_specs;
    auto check = [&](const JobEntry& e, const std::string& label) -> Status {
      LOCKSTEP_RETURN_IF_ERROR(CheckOwner(caller, e));
      // Per entry, not per spec: tasks that share a spec may be pending and running.
      if ((c.account || c.pending.any_pending_only()) && e.state != JobState::kPending)
        return FailedPrecondition("Job is no longer pending execution");
      if (!c.changes_spec() || new_specs.count(e.spec.get())) return Status::Ok();
      Result<jobspec::JobSpec> spec = ChangedSpecLocked(e, c, op, label, stored);
      if (!spec.ok()) return spec.status();
      // No way around a rule by changing a job after it was admitted: judged as its owner's.
      if (gate && spec->external.empty()) {
        policy::Request r = JobPolicyRequestLocked(Caller{e.uid, e.gid, e.user}, *spec, "update");
        gate->Identify(r);
        policy::Decision d = gate->Decide(r);
        const bool denied = d.verdict == policy::Verdict::kDeny;
        std::string message = d.message;
        judged.decisions.emplace_back(std::move(r), std::move(d));
        if (denied) return PermissionDenied("update of job " + label + ": " + message);
      }
      new_specs[e.spec.get()] = specs_.Intern(std::move(*spec));
      return Status::Ok();
    };
    for (const JobEntry* e : targets) LOCKSTEP_RETURN_IF_ERROR(check(*e, e->DisplayId()));
    if (rest) {  // the tasks not split off: checked as the next of them would be
      const JobEntry next = rest->EntryOf(rest->FirstPendingId());
      LOCKSTEP_RETURN_IF_ERROR(check(next, next.DisplayId()));
    }
    // Then every change, in one write.
    auto apply = [&](JobEntry& e) {
      if (c.changes_spec()) e.spec = new_specs.at(e.spec.get());
      if (c.priority) e.admin_priority = *c.priority;
      if (c.comment) e.comment = *c.comment;
    };
    std::vector<store::Record> records;
    for (JobEntry* e : targets) {
      apply(*e);
      TouchLocked(*e);
      records.push_back({"jobs", JobKey(e->id), RecordOfLocked(*e)});
    }
    if (rest) {
      apply(rest->mutable_tmpl());
      records.push_back(PendingArrayRecordLocked(*rest));
    }
    write = QueueWriteLocked(std::move(records));
    RequestPassLocked();
  }
  return Durable(std::move(write));
}

Result<Controller::UpdateTargets> Controller::UpdateTargetsLocked(JobId id, bool whole_array) {
  UpdateTargets t;
  if (whole_array && IsArrayIdLocked(id)) {
    for (auto it = jobs_.lower_bound(id); it != jobs_.end() && it->second.array_job_id == id;
         ++it)
      if (Updatable(it->second)) t.jobs.push_back(&it->second);
    auto a = pending_arrays_.find(id);
    if (a != pending_arrays_.end()) t.rest = &a->second;
    if (t.jobs.empty() && !t.rest)
      return FailedPrecondition("job " + std::to_string(id) + " has already finished");
    return t;
  }
  Result<JobEntry*> found = FindLocked(id);
  if (!found.ok()) return found.status();
  if (!Updatable(**found))
    return FailedPrecondition("job " + (*found)->DisplayId() + " has already finished");
  t.jobs.push_back(*found);
  return t;
}

bool Controller::IsArrayIdLocked(JobId id) const {
  if (pending_arrays_.count(id) || cancelled_arrays_.count(id)) return true;
  auto it = jobs_.lower_bound(id);
  return it != jobs_.end() && it->second.array_job_id == id;
}

Result<jobspec::JobSpec> Controller::ChangedSpecLocked(const JobEntry& e, const JobChanges& c,
                                                       bool op, const std::string& label,
                                                       const StoredTargets& stored) {
  jobspec::JobSpec spec = *e.spec;
  if (c.time_limit || c.time_limit_add) {
    // The limit the job has now: its own, else its partition's default (as squeue shows it).
    engine::Job j = ToEngineJob(e, cluster_);
    const Seconds current = engine::ShapeOf(j, cluster_.base.partitions[j.partition]).duration;
    Seconds limit = c.time_limit.value_or(0);
    if (c.time_limit_add) {
      if (current >= kUnlimited)
        return InvalidArgument("update: TimeLimit: job " + label + "'s limit is UNLIMITED");
      limit = current + *c.time_limit_add;
      if (limit <= 0)
        return InvalidArgument("update: TimeLimit decrement larger than job " + label +
                               "'s time limit");
    }
    // Slurm's scontrol adds in 32-bit minutes and wraps; a limit past the one a submission may
    // have is refused, whichever way it was asked for.
    if (limit > jobspec::kMaxTimeLimit)
      return InvalidArgument(fmt::format(
          "update: TimeLimit: job {}'s limit would be {} minutes, above the maximum {} minutes",
          label, limit / 60, jobspec::kMaxTimeLimit / 60));
    // Users may lower their limit; only operators may raise it (as in Slurm).
    if (!op && limit > current)
      return PermissionDenied("update: only an operator may raise a time limit (job " + label +
                              ")");
    spec.time_limit = limit;
  }
  if (c.nice) spec.nice = *c.nice;
  if (c.name) {
    LOCKSTEP_RETURN_IF_ERROR(jobspec::CheckSize("the job name", c.name->size(), "max_name_length",
                                                submit_limits_.max_name_length));
    spec.name = *c.name;
  }
  if (c.account) {
    // Slurm's words (ESLURM_JOB_NOT_PENDING); the account a job charges is fixed once it runs.
    if (e.state != JobState::kPending)
      return FailedPrecondition("Job is no longer pending execution");
    LOCKSTEP_RETURN_IF_ERROR(CheckAccountAccess(cluster_, e.user, *c.account));
    spec.account = *c.account;
  }
  LOCKSTEP_RETURN_IF_ERROR(ApplyPendingChangesLocked(e, c.pending, stored, label, spec));
  return spec;
}

}  // namespace lockstep::controller
