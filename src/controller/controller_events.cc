// Events from the backend (backend::EventSink): queued by the backend's threads without the
// controller's lock, applied in order by the events thread under it.
#include <algorithm>
#include <cstdio>

#include "common/log.h"
#include "controller/controller.h"
#include "controller/controller_internal.h"

namespace lockstep::controller {

void Controller::QueueEvent(std::function<void(Time)> apply) {
  {
    std::lock_guard<std::mutex> lock(events_mu_);
    events_.push_back(std::move(apply));
    ++events_queued_;
  }
  events_changed_.notify_all();
}

void Controller::EventLoop() {
  std::unique_lock<std::mutex> events_lock(events_mu_);
  for (;;) {
    events_changed_.wait(events_lock, [this] { return events_stopping_ || !events_.empty(); });
    if (events_stopping_) return;
    std::deque<std::function<void(Time)>> batch;
    batch.swap(events_);
    events_lock.unlock();
    {
      HeldLock lock(*this);
      const Time now = clock_.Now();
      for (auto& apply : batch) apply(now);
    }
    events_lock.lock();
    events_applied_ += batch.size();
    events_changed_.notify_all();
  }
}

void Controller::NodesReported(std::vector<NodeReport> nodes, bool complete) {
  QueueEvent([this, nodes = std::move(nodes), complete](Time now) {
    NodesReportedLocked(nodes, complete, now);
  });
}

void Controller::RunsAlive(std::vector<std::string> nodes, std::vector<backend::RunId> alive) {
  QueueEvent([this, nodes = std::move(nodes), alive = std::move(alive)](Time now) {
    RunsAliveLocked(nodes, alive, now);
  });
}

void Controller::RunExited(backend::RunId run, backend::ExitStatus status) {
  QueueEvent([this, run, status](Time now) { RunExitedLocked(run, status, now); });
}

void Controller::LaunchFailed(backend::RunId run, std::string why) {
  QueueEvent([this, run, why = std::move(why)](Time now) {
    LaunchFailedLocked(run, why, /*may_requeue=*/true, now);
  });
}

void Controller::StepNodeExited(JobId job, std::int32_t step, std::string node,
                                backend::ExitStatus status) {
  QueueEvent([this, job, step, node = std::move(node), status](Time now) {
    StepNodeExitedLocked(job, step, node, status, now);
  });
}

void Controller::StepOutput(std::vector<backend::OutputChunk> chunks) {
  QueueEvent([this, chunks = std::move(chunks)](Time now) {
    for (const backend::OutputChunk& c : chunks) {
      StepOutputBuffer* buffer = step_outputs_.Find({c.job, c.step});
      if (buffer) buffer->Append(c.rank, c.is_stderr, c.data);  // else srun is gone
    }
    FreeStepOutputsLocked(now);
    step_output_changed_.notify_all();
  });
}

void Controller::RunsAliveLocked(const std::vector<std::string>& nodes,
                                 const std::vector<backend::RunId>& alive, Time now) {
  std::set<std::string> on(nodes.begin(), nodes.end());
  std::set<backend::RunId> running(alive.begin(), alive.end());
  // Adoption: runs the backend still has stay RUNNING; a run on these nodes that it does not
  // have ended while nobody watched.
  for (JobId id : std::vector<JobId>(active_.begin(), active_.end())) {
    JobEntry& e = jobs_.at(id);
    if (!HoldsAllocation(e.state) || !HasOwnRun(e)) continue;
    // Judged by its first node, where the batch step runs.
    const bool here =
        !e.placement.empty() && (nodes.empty() || on.count(e.placement.front().node) > 0);
    if (here && !running.count({e.id, e.restart_count})) RunLostLocked(e, "NodeFail", now);
  }
  // Runs lockstepd no longer wants (ended, cancelled, or requeued while their node was
  // unreachable): their processes must go.
  for (const backend::RunId& run : running) {
    auto it = jobs_.find(run.job);
    const bool current =
        it != jobs_.end() && it->second.restart_count == run.run &&
        HoldsAllocation(it->second.state);
    if (!current) {
      SendLocked({Command::Terminate{run, 0}});
    } else if (it->second.state == JobState::kCompleting) {
      // Asked to end, and still alive: the order may have gone to a backend that did not know
      // the run yet (lockstepd restarted, the node's agent not back), so it is given again.
      SendLocked({Command::Terminate{run, options_.kill_wait}});
    }
  }
  RequestPassLocked();
}

void Controller::RunExitedLocked(backend::RunId run, backend::ExitStatus status, Time now) {
  auto it = jobs_.find(run.job);
  if (it == jobs_.end()) return;
  JobEntry& e = it->second;
  // Idempotent: a backend may report an end twice. The end of an earlier run of a requeued job
  // is not the end of this one.
  if (run.run != e.restart_count) return;
  if (!HoldsAllocation(e.state)) return;
  // A task that could not start (its output file, as the user): the job fails saying why.
  if (!status.error.empty()) SetFailure(e, "launch", status.error);
  if (e.requeue_at_end && !e.cancel_requested) {  // preempted in REQUEUE mode (controller_apply.cc)
    RequeueLocked(e, "Preempted", now);
    return;
  }
  EndJobLocked(e, status, now);
}

void Controller::LaunchFailedLocked(backend::RunId run, const std::string& why, bool may_requeue,
                                    Time now) {
  auto it = jobs_.find(run.job);
  if (it == jobs_.end()) return;
  JobEntry& e = it->second;
  if (run.run != e.restart_count ||
      !HoldsAllocation(e.state))
    return;
  log::Warning("job {}: launch failed: {}", e.DisplayId(), why);
  SetFailure(e, "launch", why);
  if (may_requeue && e.spec->requeue.value_or(true) && !e.cancel_requested) {
    RequeueLocked(e, "LaunchFailed", now);
    return;
  }
  e.reason = "LaunchFailed";
  EndJobLocked(e, {1, 0, false}, now);
}

void Controller::StepNodeExitedLocked(JobId job, std::int32_t step, const std::string& node,
                                      backend::ExitStatus status, Time now) {
  auto st = steps_.find({job, step});
  if (st == steps_.end()) return;
  StepInfo& info = *st->second;
  info.nodes_running.erase(node);
  info.exit_code = std::max(info.exit_code, status.exit_code);
  if (status.signal != 0 && info.signal == 0) info.signal = status.signal;
  if (info.nodes_running.empty() && info.state == "RUNNING") {
    info.state = info.exit_code == 0 && info.signal == 0 ? "COMPLETED" : "FAILED";
    info.end_time = now;
    step_inputs_.Close({job, step});
  }
  step_output_changed_.notify_all();
}

}  // namespace lockstep::controller
