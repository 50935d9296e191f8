// scontrol suspend and resume: an operator stops a running job's tasks where they run (the
// backend freezes their cgroups, or stops their process groups) and lets them go on later. The
// job keeps its allocation; the time it spends suspended is added to its time limit, as Slurm
// adds it to the job's end, and the engine is told the later end (RunningEngineJobLocked).
#include "controller/controller.h"
#include "controller/controller_internal.h"

namespace lockstep::controller {
namespace {

// Why `e` cannot be suspended or resumed now, in Slurm's words (its _job_suspend_op), which
// scontrol prints followed by " for job ID".
Status SuspendPrecondition(const JobEntry& e, bool suspend) {
  // A heterogeneous job is suspended and resumed through its leader, all components at once.
  if (e.is_het_component() && !e.is_het_leader()) return FailedPrecondition(kNotOnHetComponent);
  if (e.state == JobState::kPending) return FailedPrecondition("Job is pending execution");
  if (IsFinished(e.state) || e.state == JobState::kCompleting || e.cancel_requested || e.timed_out)
    return FailedPrecondition("Job/step already completing or completed");
  if (suspend && e.state != JobState::kRunning) return FailedPrecondition("Job is not running");
  if (!suspend && e.state != JobState::kSuspended)
    return FailedPrecondition("Job is not suspended");
  return Status::Ok();
}

}  // namespace

Status Controller::Suspend(const Caller& caller, JobId id) {
  store::PendingWrite write;
  {
    HeldLock lock(*this);
    // Slurm's words: the client prints them after "slurm_suspend error: ".
    if (!IsOperator(caller.uid)) return PermissionDenied("Access/permission denied");
    Result<JobEntry*> found = FindLocked(id);
    if (!found.ok()) return NotFound("Invalid job id specified");
    JobEntry& e = **found;
    LOCKSTEP_RETURN_IF_ERROR(SuspendPrecondition(e, true));
    if (!supports_suspend_)
      return FailedPrecondition("Requested operation not supported on this backend");
    std::vector<const JobEntry*> changed;
    for (JobEntry* c : WholeJobLocked(e)) {
      if (c->state != JobState::kRunning) continue;
      c->state = JobState::kSuspended;
      c->suspend_time = clock_.Now();
      TouchLocked(*c);
      JobEventLocked("suspended", *c);
      changed.push_back(c);
    }
    // The records first: a lockstepd that restarts after the command went out knows the job as
    // SUSPENDED, never as RUNNING with stopped tasks. (A heterogeneous job's steps are its
    // leader's run: the one command stops them on every component's nodes.)
    write = PersistLocked(changed);
    SendLocked({Command::Suspend{{e.id, e.restart_count}, true}});
  }
  return Durable(std::move(write));
}

Status Controller::Resume(const Caller& caller, JobId id) {
  store::PendingWrite write;
  {
    HeldLock lock(*this);
    if (!IsOperator(caller.uid)) return PermissionDenied("Access/permission denied");
    Result<JobEntry*> found = FindLocked(id);
    if (!found.ok()) return NotFound("Invalid job id specified");
    JobEntry& e = **found;
    LOCKSTEP_RETURN_IF_ERROR(SuspendPrecondition(e, false));
    std::vector<const JobEntry*> changed;
    for (JobEntry* c : WholeJobLocked(e)) {
      if (c->state != JobState::kSuspended) continue;
      ResumeRunLocked(*c, clock_.Now());
      JobEventLocked("resumed", *c);
      changed.push_back(c);
    }
    write = PersistLocked(changed);
    RequestPassLocked();  // its later end may change the reservations of others
  }
  return Durable(std::move(write));
}

void Controller::EndSuspensionLocked(JobEntry& job, Time now) {
  if (job.suspend_time == 0) return;
  job.suspended_seconds = job.SuspendedUntil(now);
  job.suspend_time = 0;
}

void Controller::ResumeRunLocked(JobEntry& job, Time now) {
  EndSuspensionLocked(job, now);
  job.state = JobState::kRunning;
  TouchLocked(job);  // the scheduler replays it with its longer limit
  if (HasOwnRun(job)) SendLocked({Command::Suspend{{job.id, job.restart_count}, false}});
}

}  // namespace lockstep::controller
