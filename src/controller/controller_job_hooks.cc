// Prolog and Epilog failures (docs/health.md, "Prolog and Epilog"): as slurmctld does, a node
// whose prolog or epilog fails is drained with a reason naming the program, and the run whose
// prolog failed goes back to the queue at once (as with SchedulerParameters=
// nohold_on_prolog_fail), to land elsewhere, with cause `node`.
#include "common/log.h"
#include "controller/controller.h"
#include "controller/controller_internal.h"

namespace lockstep::controller {
namespace {

// The user a hook's drain is shown under in `sinfo -R`.
constexpr const char* kHookUser = "lockstep-agent";

}  // namespace

void Controller::JobHookFailed(backend::JobHookFailure failure) {
  QueueEvent([this, failure = std::move(failure)](Time now) { JobHookFailedLocked(failure, now); });
}

void Controller::JobHookFailedLocked(const backend::JobHookFailure& f, Time now) {
  const std::uint32_t n = NodeIndexLocked(f.node);
  if (n == engine::kNone) return;
  log::Warning("node {}: {} {} of job {} failed: {}", f.node, f.hook, f.program, f.run.job,
               f.detail);
  NodeInfo& info = nodes_[n];
  // An operator's drain or DOWN stays as it is; a health drain is taken over: its checks
  // passing must not resume a node whose prolog fails.
  if (info.admin == engine::NodeState::kUp || info.health_drain) {
    info.admin = engine::NodeState::kDrain;
    info.health_drain = false;
    info.health_event = false;
    info.reason = f.hook + " " + f.program + " failed: " + f.detail + " (job " +
                  std::to_string(f.run.job) + ")";
    info.reason_user = kHookUser;
    info.reason_time = now;
    PersistNodeLocked(n);
    RequestPassLocked();
  }
  if (f.hook != "prolog") return;  // an epilog runs after the job: it changes nothing of it
  auto it = jobs_.find(f.run.job);
  if (it == jobs_.end()) return;
  JobEntry& e = it->second;
  if (f.run.run != e.restart_count || e.state != JobState::kRunning) return;
  SetFailure(e, "node", "prolog failed: " + f.detail + " on " + f.node);
  RunLostLocked(e, "PrologFail", now);
}

}  // namespace lockstep::controller
