// scontrol notify JOBID MESSAGE: the message goes to every srun that follows a running step of
// the job (an interactive srun's own step, or the sruns a batch script runs), each printing
// "srun: MESSAGE" on its stderr as Slurm's srun does. It travels the way their output does:
// into the step's output buffer as a numbered notice (step_output.h), which answers srun's
// waiting read at once (controller_steps.cc). Not durable: a notice is for the sruns running.
#include <limits>

#include "controller/controller.h"
#include "controller/controller_internal.h"
#include "jobspec/validate.h"

namespace lockstep::controller {

Status Controller::Notify(const Caller& caller, JobId id, const std::string& message) {
  LOCKSTEP_RETURN_IF_ERROR(
      jobspec::CheckSize("the message", message.size(), "", jobspec::kMaxShortText));
  HeldLock lock(*this);
  Result<JobEntry*> found = FindLocked(id);
  if (!found.ok()) return found.status();
  JobEntry& job = **found;
  LOCKSTEP_RETURN_IF_ERROR(CheckOwner(caller, job));
  // Slurm's words (ESLURM_DISABLED) for a job that does not run.
  constexpr char kDisabled[] = "Requested operation is presently disabled";
  if (job.state != JobState::kRunning)
    return FailedPrecondition(kDisabled);
  int told = 0;
  for (auto it = steps_.lower_bound({id, std::numeric_limits<std::int32_t>::min()});
       it != steps_.end() && it->first.first == id; ++it) {
    if (it->second->state != "RUNNING") continue;
    StepOutputBuffer* buffer = step_outputs_.Find(it->first);
    if (!buffer) continue;  // its output goes to files: no srun follows it
    buffer->AddNotice(message);
    ++told;
  }
  if (told == 0)
    return FailedPrecondition(std::string(kDisabled) + ": job " + job.DisplayId() +
                              " has no running srun to tell");
  step_output_changed_.notify_all();  // waiting reads answer now
  JobEventLocked("notified", job);
  return Status::Ok();
}

}  // namespace lockstep::controller
