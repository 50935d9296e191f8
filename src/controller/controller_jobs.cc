// The users' side: submit, cancel, hold, release, requeue (update: controller_update.cc).
#include <algorithm>
#include <cstdio>

#include "controller/account_access.h"
#include "controller/controller.h"
#include "controller/controller_internal.h"
#include "controller/job_convert.h"
#include "jobspec/validate.h"

namespace lockstep::controller {
Result<JobId> Controller::Submit(const Caller& caller, jobspec::JobSpec spec) {
  // Only a backend's admission (Admit) queues jobs for pods others created; no user may, root
  // included.
  if (!spec.external.empty())
    return PermissionDenied("only lockstepd's backend may submit a job for external pods");
  return SubmitAs(caller, std::move(spec));
}

Result<JobId> Controller::SubmitAs(const Caller& caller, jobspec::JobSpec spec) {
  if (!spec.het_components.empty()) return SubmitHetAs(caller, std::move(spec));
  if (spec.array && spec.array->indices.empty())
    return InvalidArgument("invalid job array specification");
  const std::uint64_t count = spec.array ? spec.array->indices.size() : 1;
  JobId first = 0;
  // Every number in range and every product fits, before anything changes (jobspec/validate.h).
  // Sizes too (the cluster's max_name_length, max_script_size, max_env_size), off the lock.
  LOCKSTEP_RETURN_IF_ERROR(jobspec::Validate(spec, ValidationLimits(caller)));
  // The site's admission policy (docs/policy.md), judged and logged before anything changes.
  LOCKSTEP_RETURN_IF_ERROR(CheckJobPolicy(caller, spec));
  // Targets purged from memory after MinJobAge, as stored: read before the lock.
  Result<StoredTargets> stored = ReadStoredTargets(spec);
  if (!stored.ok()) return stored.status();
  {
    HeldLock lock(*this);
    LOCKSTEP_RETURN_IF_ERROR(AdmitSpecLocked(caller, spec, *stored, count));
    // Ids are given out in memory; the job records that use them make them durable (Recover
    // starts above the highest), so a submission is one commit, not two.
    first = next_job_id_;
    next_job_id_ += count;
  }
  // Built without the lock: the script and environment, once per submission (array tasks share
  // them), and the job's record (an array's: one record for all its tasks).
  nlohmann::json blob = {
      {"script", spec.script}, {"env", spec.environment}, {"args", spec.script_args}};
  std::vector<store::Record> records = {{"scripts", ScriptKey(first), blob.dump()}};
  spec.script.clear();
  spec.environment.clear();
  spec.warnings.clear();
  JobEntry e;
  e.id = first;
  e.uid = caller.uid;
  e.gid = caller.gid;
  e.user = caller.user;
  e.submit_time = clock_.Now();
  e.held_by_user = spec.hold;
  std::optional<PendingArray> array;
  if (spec.array) {
    e.array_job_id = first;
    array.emplace(e, spec.array->indices);
    DropArrayIndices(*spec.array);
  }
  store::PendingWrite write;
  {
    HeldLock lock(*this);
    std::shared_ptr<const jobspec::JobSpec> shared = specs_.Intern(std::move(spec));
    e.spec = shared;
    if (array) {
      // An array's spec is stored once, and its tasks wait in one record; the first task is
      // split off for the scheduler at once (SplitArrayWindowsLocked offers more as they start).
      records.push_back({"array_specs", JobKey(first), *specs_.JsonOf(shared)});
      array_specs_[first] = shared;
      array->mutable_tmpl().spec = shared;
      auto [it, fresh] = pending_arrays_.emplace(first, std::move(*array));
      SplitOffLocked(it->second, first, records);
      it->second.window().push_back(first);
      records.push_back(PendingArrayRecordLocked(it->second));
      if (it->second.empty()) pending_arrays_.erase(it);
    } else {
      records.push_back({"jobs", JobKey(first), RecordOfLocked(e)});
      TouchLocked(jobs_.emplace(first, std::move(e)).first->second);
    }
    // Queued under the lock (memory only): the jobs exist for the scheduler once their record
    // is queued, and no later record of theirs can be committed before this one.
    write = QueueWriteLocked(std::move(records));
    // One event for an array (its first task's, with the count), not one per task.
    JobEventLocked("submitted", jobs_.at(first), count > 1 ? count : 0);
    stats_.RecordSubmitted(count);
    RequestPassLocked();
  }
  // Acknowledged only once durable: the group commit's fsync.
  LOCKSTEP_RETURN_IF_ERROR(Durable(std::move(write)));
  return first;
}

// Everything a submission must pass under the lock, each component of a heterogeneous job on
// its own: account, partition, reservation, mounts, sizes, counts and dependencies. Fills the
// defaults (account, partition, name) it decides.
Status Controller::AdmitSpecLocked(const Caller& caller, jobspec::JobSpec& spec,
                                   const StoredTargets& stored, std::uint64_t count,
                                   bool runs_script) {
  LOCKSTEP_RETURN_IF_ERROR(CheckAccountLocked(caller, spec));
  if (spec.account.empty() && spec.external.empty())
    spec.account = DefaultAccountOf(cluster_, caller.user);
  LOCKSTEP_RETURN_IF_ERROR(runs_script ? ValidateSpec(spec, cluster_)
                                       : ValidatePlacement(spec, cluster_));
  LOCKSTEP_RETURN_IF_ERROR(CheckPartitionOpenLocked(spec));
  // The partition is the job's from now on, as the account is: a later Default=YES of
  // another partition moves no job (Slurm's job records name theirs).
  if (spec.partition.empty() && cluster_.default_partition < cluster_.base.partitions.size())
    spec.partition = cluster_.base.partitions[cluster_.default_partition].name;
  LOCKSTEP_RETURN_IF_ERROR(CheckReservationAccessLocked(caller, spec));
  LOCKSTEP_RETURN_IF_ERROR(CheckContainerMountsLocked(spec));
  // Slurm's MaxArraySize: every index below it (Slurm's words: "Invalid job array
  // specification").
  if (spec.array && spec.array->indices.back() >= cluster_.max_array_size)
    return InvalidArgument("Invalid job array specification: index " +
                           std::to_string(spec.array->indices.back()) +
                           " is not below MaxArraySize=" +
                           std::to_string(cluster_.max_array_size));
  LOCKSTEP_RETURN_IF_ERROR(CheckJobCountLocked());
  LOCKSTEP_RETURN_IF_ERROR(CheckSubmitLimitsLocked(caller, spec, count));
  LOCKSTEP_RETURN_IF_ERROR(ResolveDependenciesLocked(spec, stored));
  if (spec.name.empty()) spec.name = "sbatch";  // sbatch's own default for a script from stdin
  return Status::Ok();
}

Status Controller::ResolveDependenciesLocked(jobspec::JobSpec& spec, const StoredTargets& stored) {
  // Dependencies on array tasks ("after:40_2") name that task's own job id; a task still in
  // its array's record is split off, so the scheduler can follow it. A target purged from
  // memory is kept with its final state while the job waits (purged_targets_).
  for (jobspec::DependencySpec& d : spec.dependencies) {
    if (d.type == jobspec::DependencyType::kSingleton) continue;
    if (!d.has_task) {
      if (jobs_.count(d.job) || purged_targets_.count(d.job)) continue;
      if (PendingArray* a = PendingArrayOfLocked(d.job)) {
        // aftercorr names a whole array: each dependent task finds its own target task as it
        // is split off (controller_depend.cc), so none is split off here.
        if (d.type != jobspec::DependencyType::kAfterCorr) SplitTaskLocked(*a, d.job);
        continue;
      }
      if (std::optional<JobState> ended = StoredTargetStateLocked(d.job, stored)) {
        purged_targets_[d.job] = *ended;
        continue;
      }
      return InvalidArgument("job dependency problem: job " + std::to_string(d.job) +
                             " does not exist");
    }
    auto array = pending_arrays_.find(d.job);
    std::optional<JobId> id;
    if (array != pending_arrays_.end()) id = array->second.IdOfTask(d.array_task);
    if (id && array->second.Holds(*id)) {
      SplitTaskLocked(array->second, *id);
    } else {
      auto task = std::find_if(jobs_.begin(), jobs_.end(), [&](const auto& kv) {
        return kv.second.array_job_id == d.job && kv.second.array_task_id == d.array_task;
      });
      auto purged = stored.tasks.find({d.job, d.array_task});
      if (task != jobs_.end()) {
        id = task->first;
      } else if (purged != stored.tasks.end()) {
        id = purged->second.first;
        purged_targets_[*id] = purged->second.second;
      } else {
        return InvalidArgument("job dependency problem: no task " + std::to_string(d.job) + "_" +
                               std::to_string(d.array_task));
      }
    }
    d.job = *id;
    d.has_task = false;
  }
  return Status::Ok();
}

Status Controller::Cancel(const Caller& caller, JobId id, int signal, SignalTarget target) {
  store::PendingWrite write;
  {
    HeldLock lock(*this);
    Result<JobEntry*> found = FindLocked(id);
    if (!found.ok()) return found.status();
    JobEntry& e = **found;
    LOCKSTEP_RETURN_IF_ERROR(CheckOwner(caller, e));
    if (IsFinished(e.state))
      return FailedPrecondition("job " + e.DisplayId() + " has already finished");
    if (signal != 0) {
      // A suspended job's tasks get the signal when they are resumed, as in Slurm.
      if (e.state != JobState::kRunning && e.state != JobState::kSuspended)
        return FailedPrecondition("job " + e.DisplayId() + " is not running");
      if (target == SignalTarget::kSteps) {
        for (auto& [key, step] : steps_)
          if (key.first == e.id && step->state == "RUNNING")
            SendLocked({Command::SignalStep{e.id, key.second, signal, 0}});
        return Status::Ok();
      }
      SendLocked({Command::Signal{{e.id, e.restart_count}, signal,
                                  target == SignalTarget::kBatch}});
      return Status::Ok();
    }
    if (e.is_het_component()) {
      if (!e.is_het_leader() && e.state == JobState::kPending)
        return FailedPrecondition(kNotOnHetComponent);
      write = CancelHetLocked(e);
    } else {
      write = CancelLocked(e);
    }
  }
  return Durable(std::move(write));
}

store::PendingWrite Controller::CancelLocked(JobEntry& e) {
  store::PendingWrite write;
  if (e.state == JobState::kPending) {
    e.state = JobState::kCancelled;
    e.end_time = clock_.Now();
    e.reason = "None";
    TouchLocked(e);
    JobEndedLocked(e);
    write = PersistLocked({&e});
  } else {
    // scancel of a suspended job resumes it, then ends it (Slurm's order): its record says
    // so before the commands go out.
    if (e.state == JobState::kSuspended) ResumeRunLocked(e, clock_.Now());
    e.cancel_requested = true;
    write = PersistLocked({&e});
    TerminateLocked(e);
  }
  RequestPassLocked();
  return write;
}

Status Controller::Hold(const Caller& caller, JobId id, bool user_hold) {
  store::PendingWrite write;
  {
    HeldLock lock(*this);
    Result<JobEntry*> found = FindLocked(id);
    if (!found.ok()) return found.status();
    JobEntry& e = **found;
    LOCKSTEP_RETURN_IF_ERROR(CheckOwner(caller, e));
    if (e.state != JobState::kPending)
      return FailedPrecondition("job " + e.DisplayId() + " is not pending");
    // scontrol hold by an operator on another's job is an admin hold (JobHeldAdmin).
    // The reason shows at once, as Slurm's does; the next pass would say the same.
    if (IsOperator(caller.uid) && caller.uid != e.uid && !user_hold) {
      e.held_by_admin = true;
      e.reason = "JobHeldAdmin";
    } else {
      e.held_by_user = true;
      e.reason = "JobHeldUser";
    }
    e.requeue_held = false;  // held again: the hold's own reason (Slurm clears its state_desc)
    TouchLocked(e);
    write = PersistLocked({&e});
    RequestPassLocked();  // a held job gives up its reservation: others may start now
  }
  return Durable(std::move(write));
}

Status Controller::Release(const Caller& caller, JobId id) {
  store::PendingWrite write;
  {
    HeldLock lock(*this);
    Result<JobEntry*> found = FindLocked(id);
    if (!found.ok()) return found.status();
    JobEntry& e = **found;
    LOCKSTEP_RETURN_IF_ERROR(CheckOwner(caller, e));
    if (e.held_by_admin && !IsOperator(caller.uid))
      return PermissionDenied("job " + e.DisplayId() +
                              " was held by an operator; only an operator may release it");
    e.held_by_user = e.held_by_admin = false;
    e.special_exit = e.requeue_held = false;  // an ordinary pending job again (Slurm's too)
    TouchLocked(e);
    write = PersistLocked({&e});
    RequestPassLocked();
  }
  return Durable(std::move(write));
}

Status Controller::Requeue(const Caller& caller, JobId id) {
  return RequeueJob(caller, id, false, false);
}

Status Controller::RequeueHold(const Caller& caller, JobId id, bool special_exit) {
  return RequeueJob(caller, id, true, special_exit);
}

Status Controller::RequeueJob(const Caller& caller, JobId id, bool hold, bool special_exit) {
  store::PendingWrite write;
  {
    HeldLock lock(*this);
    Result<JobEntry*> found = FindLocked(id);
    if (!found.ok()) return found.status();
    JobEntry& e = **found;
    LOCKSTEP_RETURN_IF_ERROR(CheckOwner(caller, e));
    if (e.is_het_component() && !e.is_het_leader())
      return FailedPrecondition("Job not heterogeneous job leader");
    if (e.state != JobState::kRunning)
      return FailedPrecondition("job " + e.DisplayId() + " is not running");
    if (!e.spec->requeue.value_or(true))
      return FailedPrecondition("job " + e.DisplayId() + " may not be requeued");
    RequeueRunLocked(e, "JobRequeued", clock_.Now());
    if (hold) {
      // Held before the lock is let go and in the same record: no pass sees it unheld. Slurm
      // holds a requeuehold as the user's hold (WAIT_HELD_USER), whoever asked, so its owner
      // may release it; its reason shows as Slurm's state_desc (JobJsonLocked).
      e.held_by_user = true;
      e.reason = "JobHeldUser";
      e.special_exit = special_exit;
      e.requeue_held = true;
    }
    write = PersistLocked({&e});
    RequestPassLocked();
  }
  return Durable(std::move(write));
}

Status Controller::SetNodeState(const Caller& caller, const std::string& node,
                                const std::string& state, const std::string& reason) {
  if (!IsOperator(caller.uid))
    return PermissionDenied("only an operator may change a node's state");
  std::string s = state;
  std::transform(s.begin(), s.end(), s.begin(), ::toupper);
  const bool up = s == "RESUME" || s == "UNDRAIN" || s == "IDLE";
  if (s != "DRAIN" && s != "DOWN" && !up)
    return InvalidArgument("invalid node state specified: " + state + " (DRAIN, DOWN or RESUME)");
  if ((s == "DRAIN" || s == "DOWN") && reason.empty())
    return InvalidArgument("you must specify a reason when changing a node's state to " + s);
  store::PendingWrite write;
  {
    HeldLock lock(*this);
    std::uint32_t n = NodeIndexLocked(node);
    if (n == engine::kNone) return NotFound("invalid node name specified: " + node);
    NodeInfo& info = nodes_[n];
    const Time now = clock_.Now();
    if (s == "DRAIN") {
      info.admin = engine::NodeState::kDrain;
    } else if (s == "DOWN") {
      info.admin = engine::NodeState::kDown;
      for (JobId id : std::vector<JobId>(active_.begin(), active_.end())) {
        JobEntry& e = jobs_.at(id);
        if (e.state != JobState::kRunning && e.state != JobState::kSuspended) continue;
        if (std::any_of(e.placement.begin(), e.placement.end(),
                        [&](const PlacedNode& p) { return p.node == node; })) {
          SetFailure(e, "node",
                     "node " + node + " set DOWN by " + caller.user + ": " + reason);
          if (e.spec->requeue.value_or(true)) {
            RequeueLocked(e, "NodeDown", now);
          } else {
            e.cancel_requested = true;
            PersistLocked({&e});
            TerminateLocked(e);
          }
        }
      }
    } else {
      info.admin = engine::NodeState::kUp;
    }
    info.reason = up ? "" : reason;
    info.health_drain = false;  // the operator's word from now on; a resume ends an event drain
    if (up) ClearNodeEventDrainLocked(node);
    info.reason_user = caller.user;
    info.reason_time = now;
    NodeEventLocked(s == "DRAIN" ? "node_drained" : s == "DOWN" ? "node_down" : "node_resumed", n,
                    info.reason);
    // Durable, as a drain must outlive a restart of lockstepd.
    write = PersistNodeLocked(n);
    RequestPassLocked();
  }
  return Durable(std::move(write));
}

}  // namespace lockstep::controller
