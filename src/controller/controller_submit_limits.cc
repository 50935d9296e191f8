// What a user may submit (docs/security.md, "Limits on what a user may submit"): the sizes of
// a job's text, the account it charges, and room for it in lockstepd's memory (MaxJobCount).
// The per-user count, with sacctmgr's MaxSubmitJobs, is in controller_accounts.cc.
#include "controller/account_access.h"
#include "controller/controller.h"

namespace lockstep::controller {

jobspec::Limits Controller::ValidationLimits(const Caller& caller) const {
  return {.caller_is_operator = IsOperator(caller.uid),
          .max_name_length = submit_limits_.max_name_length,
          .max_script_size = submit_limits_.max_script_size,
          .max_env_size = submit_limits_.max_env_size};
}

Status Controller::CheckAccountLocked(const Caller& caller, const jobspec::JobSpec& spec) const {
  // A backend's admission queues jobs for pods others created (user "k8s:<namespace>"): they
  // charge what the backend says, not a user's association.
  if (!spec.external.empty()) return Status::Ok();
  return CheckAccountAccess(cluster_, caller.user, spec.account);
}

Status Controller::CheckJobCountLocked() const {
  // What lockstepd holds: every job (finished ones until purged, split-off array tasks) and
  // one record per pending array, however many tasks it keeps.
  const std::uint64_t held = jobs_.size() + pending_arrays_.size();
  if (held < submit_limits_.max_job_count) return Status::Ok();
  // Slurm answers EAGAIN and sbatch prints "Slurm temporarily unable to accept job, sleeping
  // and retrying"; lockstep's sbatch does the same on this answer (503).
  return Status(StatusCode::kUnavailable,
                "Slurm temporarily unable to accept job: MaxJobCount=" +
                    std::to_string(submit_limits_.max_job_count) +
                    " jobs are held by lockstepd (finished ones until they are purged)");
}

}  // namespace lockstep::controller
