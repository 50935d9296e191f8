// Acting on a plan: preemptions and starts (ApplyPlanLocked), then what the pass says of the
// jobs that still pend, written back only where it changed.
#include <algorithm>

#include "controller/controller.h"
#include "controller/controller_internal.h"
#include "engine/scheduler.h"

namespace lockstep::controller {

void Controller::ApplyPlanLocked(engine::Plan& plan, Time now) {
  // The plan was made from the jobs as they were at the replay. A job touched since (held,
  // cancelled, changed) and a node that went down or was drained since are left to the next
  // pass, which sees them as they are now.
  auto unchanged = [&](JobId id, JobState want) -> JobEntry* {
    if (dirty_.count(id)) return nullptr;
    auto it = jobs_.find(id);
    return it != jobs_.end() && it->second.state == want ? &it->second : nullptr;
  };
  auto nodes_usable = [&](const engine::Allocation& a) {
    return std::all_of(a.nodes.begin(), a.nodes.end(), [&](const engine::NodeAllocation& n) {
      return SchedulingStateLocked(n.node) == engine::NodeState::kUp;
    });
  };
  for (const engine::Preemption& p : plan.preemptions) {
    JobEntry* victim = unchanged(p.victim, JobState::kRunning);
    if (!victim) continue;
    // Slurm's PreemptMode: REQUEUE puts a requeueable victim back in the queue once its run has
    // ended; CANCEL, and REQUEUE of a job that may not be requeued, end it PREEMPTED.
    if (p.mode == engine::PreemptMode::kRequeue && victim->spec->requeue.value_or(true)) {
      victim->requeue_at_end = true;
    } else {
      victim->cancel_requested = true;  // nothing more of it starts
      victim->preempted = true;
    }
    victim->reason = "Preempted";
    SetFailure(*victim, "preempted", "preempted for job " + std::to_string(p.for_job));
    PersistLocked({victim});
    TerminateLocked(*victim);
  }
  for (const engine::Start& st : plan.starts) {
    JobEntry* e = unchanged(st.job, JobState::kPending);
    // Nodes resized since the replay (others' pods took room): the plan may no longer fit.
    if (!e || cluster_changed_ || limits_changed_ || !nodes_usable(st.allocation)) {
      RequestPassLocked();
      continue;
    }
    StartJobLocked(*e, st.allocation, now);
  }
}

// With 100,000 pending jobs a pass says the same of nearly all of them as the pass before;
// writing every reason back took ~20 ms under mu_.
Controller::PendingViews Controller::ChangedPendingViews(engine::Plan& plan,
                                                        engine::PlanDetail detail) {
  PendingViews views;
  views.full = detail == engine::PlanDetail::kFull;
  std::vector<JobId> changed;
  auto note = [&](JobId id, PendingView& v) {
    if (!v.changed) changed.push_back(id);
    v.changed = true;
  };
  for (engine::Pending& p : plan.pending) {
    auto [it, added] = shown_.try_emplace(p.job);
    PendingView& v = it->second;
    if (added || v.reason != p.reason || v.expected_start != p.expected_start) {
      v.reason = p.reason;
      v.expected_start = p.expected_start;
      note(p.job, v);
    }
    if (p.reserved || !p.blocked_by.empty()) views.detailed[p.job] = std::move(p);
  }
  for (const auto& [id, b] : plan.priorities) {
    auto [it, added] = shown_.try_emplace(id);
    if (added || it->second.priority != b.total) {
      it->second.priority = b.total;
      note(id, it->second);
    }
  }
  views.changed.reserve(changed.size());
  for (JobId id : changed) {
    PendingView& v = shown_[id];
    v.changed = false;
    views.changed.emplace_back(id, v);
  }
  return views;
}

void Controller::PublishPendingViewsLocked(
    PendingViews views, std::vector<std::pair<JobId, engine::PriorityBreakdown>> prios) {
  // A job changed since the replay (held, released, updated, started) keeps what it shows; its
  // next pass publishes it afresh.
  auto still_pending = [&](JobId id) -> JobEntry* {
    if (dirty_.count(id)) return nullptr;
    auto it = jobs_.find(id);
    return it != jobs_.end() && it->second.state == JobState::kPending ? &it->second : nullptr;
  };
  std::vector<JobEntry*> never_runs;
  for (const auto& [id, v] : views.changed) {
    JobEntry* e = still_pending(id);
    if (!e) {
      shown_.erase(id);
      continue;
    }
    // Waiting for room: a reservation may be what it waits for (held or dependent jobs say so).
    const bool for_room = v.reason == engine::PendingReason::kResources ||
                          v.reason == engine::PendingReason::kPriority ||
                          v.reason == engine::PendingReason::kReqNodeNotAvail;
    const std::string held_back =
        for_room ? ReservationReasonLocked(*e, v.expected_start) : std::string();
    e->reason = held_back.empty() ? engine::PendingReasonName(v.reason) : held_back;
    if (v.reason == engine::PendingReason::kJobHeldAdmin)  // held for its partition's state?
      if (const char* closed = ClosedPartitionReasonLocked(*e)) e->reason = closed;
    e->expected_start = v.expected_start;
    e->priority = v.priority;
    if (v.reason == engine::PendingReason::kDependencyNeverSatisfied &&
        cluster_.kill_invalid_depend)
      never_runs.push_back(e);
  }
  for (JobEntry* e : never_runs) KillInvalidDependLocked(*e);
  // A plan of decisions only leaves out most pending jobs: what the last full one said stays.
  if (!views.full) return;
  std::erase_if(views.detailed, [&](const auto& d) { return still_pending(d.first) == nullptr; });
  last_pending_ = std::move(views.detailed);
  last_priorities_ = std::move(prios);
}

}  // namespace lockstep::controller
