// The `scheduler` failure cause (docs/health.md): jobs that lockstepd's scheduler itself ends.
// With scheduler.kill_invalid_depend, as with Slurm's SchedulerParameters=kill_invalid_depend, a
// job whose dependency can never be satisfied (a job it needs to succeed failed, say) is
// cancelled instead of pending forever with reason DependencyNeverSatisfied.
#include "common/log.h"
#include "controller/controller.h"
#include "controller/controller_internal.h"

namespace lockstep::controller {

void Controller::KillInvalidDependLocked(JobEntry& e) {
  if (e.state != JobState::kPending) return;
  std::string on;
  for (const jobspec::DependencySpec& d : e.spec->dependencies)
    if (d.job != 0) on += (on.empty() ? "" : ",") + std::to_string(d.job);
  const std::string detail = "its dependency" + (on.empty() ? "" : " on job " + on) +
                             " can never be satisfied; cancelled by the scheduler "
                             "(scheduler.kill_invalid_depend)";
  log::Info("job {}: {}", e.DisplayId(), detail);
  SetFailure(e, "scheduler", detail);
  (void)CancelLocked(e);
}

}  // namespace lockstep::controller
