// srun's standard input for steps that read it: srun's writes are checked against the job's
// owner under the controller's lock, then relayed by StepInputs (step_input.h) outside it.
#include <future>

#include "common/base64.h"
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

// The agents' read (AgentStepInput), answered on this thread: the Kubernetes backend's input
// pumps call it, one thread per node of a step.
Result<backend::StepInputRead> Controller::ReadStepInput(JobId job, std::int32_t step,
                                                         const std::string& reader,
                                                         std::uint64_t offset,
                                                         std::uint64_t winsize_seen,
                                                         std::chrono::milliseconds wait) {
  std::promise<Result<nlohmann::json>> answer;
  std::future<Result<nlohmann::json>> ready = answer.get_future();
  step_inputs_.Read({job, step}, reader, offset, winsize_seen, wait,
                    [&answer](Result<nlohmann::json> r) { answer.set_value(std::move(r)); });
  Result<nlohmann::json> r = ready.get();
  if (!r.ok()) return r.status();
  const nlohmann::json& j = *r;
  backend::StepInputRead out;
  if (j.contains("data") && j["data"].is_string()) {
    Result<std::string> data = Base64Decode(j["data"].get<std::string>());
    if (!data.ok()) return data.status();
    out.data = std::move(*data);
  }
  out.next_offset = j.value("offset", offset);
  out.eof = j.value("eof", false);
  out.closed = j.value("closed", false);
  out.rows = j.value("rows", 0);
  out.cols = j.value("cols", 0);
  out.winsize = j.value("winsize", winsize_seen);
  return out;
}

}  // namespace lockstep::controller
