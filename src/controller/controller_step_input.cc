// srun's standard input for steps that read it: srun's writes are checked against the job's
// owner under the controller's lock, then relayed by StepInputs (step_input.h) outside it.
#include "controller/controller.h"
#include "controller/controller_internal.h"

namespace lockstep::controller {

void Controller::StepInput(const Caller& caller, JobId id, std::int32_t step,
                           const nlohmann::json& body, std::chrono::milliseconds wait,
                           StepOutputDone done) {
  Result<StepInputWrite> write = DecodeStepInputWrite(body);
  if (!write.ok()) return done(write.status());
  {
    HeldLock lock(*this);
    Result<JobEntry*> job = FindLocked(id);
    if (!job.ok()) return done(job.status());
    if (Status owner = CheckOwner(caller, **job); !owner.ok()) return done(owner);
    if (!steps_.count({id, step}))
      return done(NotFound("no step " + std::to_string(id) + "." + std::to_string(step)));
  }
  step_inputs_.Write({id, step}, std::move(*write), wait, std::move(done));
}

void Controller::AgentStepInput(JobId id, std::int32_t step, const std::string& node,
                                std::uint64_t offset, std::uint64_t winsize_seen,
                                std::chrono::milliseconds wait, StepOutputDone done) {
  step_inputs_.Read({id, step}, node, offset, winsize_seen, wait, std::move(done));
}

}  // namespace lockstep::controller
