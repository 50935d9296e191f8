// Launcher::Suspend: scontrol suspend and resume of one task (docs/agent-processes.md,
// "Suspend and resume").
#include <signal.h>

#include "backend/agent/cgroup.h"
#include "backend/agent/launcher.h"

namespace lockstep::agent {

Status Launcher::Suspend(pid_t pid, bool stop) {
  std::string cgroup_path;
  bool was_frozen = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tasks_.find(pid);
    if (it == tasks_.end()) return NotFound("no running task with pid " + std::to_string(pid));
    cgroup_path = it->second.cgroup_path;
    was_frozen = it->second.frozen;
  }
  // The freezer stops every process of the cgroup at once, also those that left the process
  // group, and none of them sees a signal (a shell's `wait` is not woken by a SIGCONT).
  if (!cgroup_path.empty() && (stop || was_frozen)) {
    Status s = cgroups_->Freeze(cgroup_path, stop);
    if (s.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = tasks_.find(pid);
      if (it != tasks_.end()) it->second.frozen = stop;
      if (stop) return Status::Ok();
    } else if (stop) {
      Log("task " + std::to_string(pid) + ": " + s.message() + "; stopping it with SIGSTOP");
    }
  }
  // No freezer: the signals. SIGCONT also on resume after a freeze, for a task that was
  // stopped by SIGSTOP before (or by the user's own SIGSTOP).
  return Signal(pid, stop ? SIGSTOP : SIGCONT);
}

}  // namespace lockstep::agent
