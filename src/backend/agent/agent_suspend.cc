// scontrol suspend and resume on one agent: every task of the run here (its batch step and its
// steps) is frozen or thawed through the launcher (Launcher::Suspend).
#include "backend/agent/agent.h"
#include "backend/agent/agent_unit.h"
#include "common/log.h"

namespace lockstep::agent {

void Agent::SuspendRun(std::uint64_t job, int run, bool stop) {
  std::lock_guard<std::mutex> lock(mu_);
  // Remembered, so that a task the run starts later (its prolog still running) starts stopped.
  if (stop)
    suspended_runs_.insert({job, run});
  else
    suspended_runs_.erase({job, run});
  int tasks = 0;
  for (const auto& u : units_) {
    if (u->job != job || u->run != run) continue;
    for (pid_t p : u->alive) {
      Status s = launcher_->Suspend(p, stop);
      if (!s.ok() && s.code() != StatusCode::kNotFound)
        log::Warning("job {}: {} task {}: {}", job, stop ? "suspend" : "resume", p, s.message());
      ++tasks;
    }
  }
  log::Info("job {}: {} {} task(s)", job, stop ? "suspended" : "resumed", tasks);
}

}  // namespace lockstep::agent
