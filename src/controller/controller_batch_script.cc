// scontrol write batch_script: a job's script as submitted, read from the store off the lock.
#include "controller/controller.h"

namespace lockstep::controller {

Result<std::string> Controller::BatchScript(const Caller& caller, JobId id) const {
  JobId script_id = 0;
  {
    HeldLock lock(*this);
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return NotFound("Invalid job id specified");
    LOCKSTEP_RETURN_IF_ERROR(CheckOwner(caller, it->second));
    // The script is in the store (table "scripts"), not in the spec: it was cleared at submission.
    script_id = it->second.is_array_task() ? it->second.array_job_id : id;
  }
  Result<std::optional<std::string>> blob = store_->Get("scripts", std::to_string(script_id));
  if (!blob.ok()) return blob.status();
  nlohmann::json b = blob->has_value() ? nlohmann::json::parse(**blob, nullptr, false) : nlohmann::json();
  if (!b.is_object() || !b.contains("script") || !b["script"].is_string() ||
      b["script"].get<std::string>().empty())
    return NotFound("job " + std::to_string(id) + " has no batch script");
  return b["script"].get<std::string>();
}

}  // namespace lockstep::controller
