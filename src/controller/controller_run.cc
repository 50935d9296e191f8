// A job's life once it starts: launch, end, requeue, loss with its node. Each changes memory
// under mu_, queues the job's record and puts the backend's commands in the outbox.
#include <algorithm>
#include <cstdio>

#include "common/log.h"
#include "controller/controller.h"
#include "controller/controller_internal.h"
#include "controller/failure_cause.h"
#include "controller/job_convert.h"
#include "controller/job_env.h"
#include "jobspec/output_pattern.h"

namespace lockstep::controller {

void Controller::TerminateLocked(JobEntry& job) {
  if (!HasOwnRun(job)) {  // a heterogeneous job's component holds nodes, nothing runs there
    if (HoldsAllocation(job.state)) EndJobLocked(job, {0, 0, false}, clock_.Now());
    return;
  }
  // A suspended job is resumed first, as Slurm's scancel does, so that its tasks see SIGTERM.
  if (job.state == JobState::kSuspended) ResumeRunLocked(job, clock_.Now());
  if (job.state == JobState::kRunning) job.state = JobState::kCompleting;
  TouchLocked(job);
  SendLocked({Command::Terminate{{job.id, job.restart_count}, options_.kill_wait}});
}

void Controller::StartJobLocked(JobEntry& job, const engine::Allocation& alloc, Time now) {
  job.state = JobState::kRunning;
  job.start_time = now;
  job.reason = "None";
  job.placement.clear();
  TouchLocked(job);
  std::int64_t gpus = 0;
  for (const engine::NodeAllocation& a : alloc.nodes) {
    job.placement.push_back({cluster_.base.nodes[a.node].name, a.cpus, a.mem_mb, a.gpus});
    gpus += __builtin_popcountll(a.gpus);
  }
  stats_.RecordStarted(PartitionOfLocked(job), gpus, now - job.submit_time);
  JobEventLocked("started", job);
  // The record first: the dispatcher launches once it is durable, so a run never exists that a
  // restarted lockstepd would not know of.
  PersistLocked({&job});
  // A heterogeneous job's leader is launched once every component has its nodes (they start
  // in one pass, leader first): its environment describes them all.
  if (job.is_het_component()) {
    std::vector<JobEntry*> group = HetComponentsLocked(job);
    const bool all_placed = group.size() == job.het_size &&
                            std::all_of(group.begin(), group.end(), [](const JobEntry* c) {
                              return c->state == JobState::kRunning;
                            });
    if (all_placed) LaunchLocked(*group.front());
    return;
  }
  LaunchLocked(job);
}

void Controller::LaunchLocked(const JobEntry& job) {
  Command::Launch launch;
  launch.order = LaunchOrderLocked(job);
  launch.script_id = job.is_array_task() ? job.array_job_id : job.id;
  SendLocked({std::move(launch)});
}

std::string Controller::OutputPathLocked(const JobEntry& job, std::int32_t run) const {
  jobspec::OutputPatternVars vars;
  vars.job_id = job.id;
  vars.array_job_id = job.array_job_id;
  vars.array_task_id = job.array_task_id;
  vars.is_array = job.is_array_task();
  vars.job_name = job.spec->name;
  vars.user = job.user;
  vars.node = job.placement.empty() ? "" : job.placement.front().node;
  vars.restart_count = static_cast<std::uint32_t>(run);
  std::string p = jobspec::ExpandOutputPattern(
      job.spec->output.empty() ? jobspec::DefaultOutputPattern(job.is_array_task())
                               : job.spec->output,
      vars);
  return !p.empty() && p[0] == '/' ? p : job.spec->work_dir + "/" + p;
}

LaunchOrder Controller::LaunchOrderLocked(const JobEntry& job) const {
  JobEnvInput in = EnvInputLocked(job);
  LaunchOrder o;
  o.job = job.id;
  o.run = job.restart_count;
  o.name = job.spec->name;
  o.user = job.user;
  o.uid = job.uid;
  o.gid = job.gid;
  o.partition = in.partition;
  o.work_dir = job.spec->work_dir;
  o.env = BatchEnvironment(in, {});  // the submitted environment goes beneath, at dispatch
  o.nodes = job.placement;
  o.tasks_per_node = in.tasks_per_node;
  o.container_image = job.spec->container_image;
  o.container_mounts = BindMountsLocked(*job.spec);
  o.time_limit = job.spec->time_limit;
  o.external = job.spec->external;
  o.stdout_path = OutputPathLocked(job, job.restart_count);
  if (job.spec->error.empty()) {
    o.stderr_path = o.stdout_path;
  } else {
    JobEntry for_error = job;
    auto spec = std::make_shared<jobspec::JobSpec>(*job.spec);
    spec->output = job.spec->error;
    for_error.spec = spec;
    o.stderr_path = OutputPathLocked(for_error, job.restart_count);
  }
  o.append_output = job.restart_count > 0;
  return o;
}

void Controller::EndJobLocked(JobEntry& job, backend::ExitStatus status, Time now,
                              std::optional<JobState> cause) {
  ChargeRunLocked(job, now);
  job.exit_code = status.exit_code;
  job.signal = status.signal;
  job.end_time = now;
  EndSuspensionLocked(job, now);  // a suspended run that ended: its suspension ends with it
  ForgetUsageLocked(job.id);
  if (cause)
    job.state = *cause;
  else if (job.preempted)
    job.state = JobState::kPreempted;
  else if (job.cancel_requested)
    job.state = JobState::kCancelled;
  else if (job.timed_out)
    job.state = JobState::kTimeout;
  else if (status.oom)
    job.state = JobState::kOutOfMemory;
  else if (status.exit_code == 0 && status.signal == 0)
    job.state = JobState::kCompleted;
  else
    job.state = JobState::kFailed;
  AttributeEnd(job, status, options_.kill_wait);
  TouchLocked(job);
  for (auto& [key, step] : steps_) {
    if (key.first != job.id || step->state != "RUNNING") continue;
    step->state = job.state == JobState::kCompleted ? "COMPLETED" : "CANCELLED";
    step->end_time = now;
    step_inputs_.Close(key);
  }
  JobEndedLocked(job);
  step_output_changed_.notify_all();
  PersistLocked({&job});
  if (job.is_het_leader()) EndHetComponentsLocked(job, now);
  RequestPassLocked();
}

store::PendingWrite Controller::RequeueLocked(JobEntry& job, const std::string& reason,
                                              Time now) {
  RequeueRunLocked(job, reason, now);
  store::PendingWrite write = PersistLocked({&job});
  RequestPassLocked();
  return write;
}

void Controller::RequeueRunLocked(JobEntry& job, const std::string& reason, Time now) {
  if (!job.is_het_component()) {
    RequeueOwnRunLocked(job, reason, now);
    return;
  }
  // A heterogeneous job goes back to the queue whole, whichever component was asked.
  std::vector<const JobEntry*> others;
  for (JobEntry* c : HetComponentsLocked(job)) {
    if (!HoldsAllocation(c->state)) continue;
    RequeueOwnRunLocked(*c, reason, now);
    if (c != &job) others.push_back(c);
  }
  if (!others.empty()) PersistLocked(others);  // the caller persists `job`
}

void Controller::RequeueOwnRunLocked(JobEntry& job, const std::string& reason, Time now) {
  // Whatever is left of this run goes at once; the next run is another run id.
  if (HasOwnRun(job)) SendLocked({Command::Terminate{{job.id, job.restart_count}, 0}});
  ChargeRunLocked(job, now);
  job.state = JobState::kPending;
  TouchLocked(job);
  job.reason = "None";  // the next pass says why it waits
  job.restart_count += 1;
  job.start_time = 0;
  job.placement.clear();
  job.timed_out = false;
  job.requeue_at_end = false;
  job.preempted = false;  // the next run ends on its own account
  ForgetUsageLocked(job.id);
  job.suspend_time = 0;  // the next run starts with its whole time limit
  job.suspended_seconds = 0;
  job.reason = reason;  // for the event; the next pass says why it waits
  JobEventLocked("requeued", job);
  job.reason = "None";
  // Slurm holds a requeued job back briefly (requeue_delay); here it may start at the next pass.
  log::Info("job {} requeued ({}) at {}", job.DisplayId(), reason, static_cast<long long>(now));
}

void Controller::RunLostLocked(JobEntry& job, const std::string& reason, Time now) {
  if (!HasOwnRun(job)) {  // a component's node lost: the whole heterogeneous job is
    auto leader = jobs_.find(job.het_job_id);
    if (leader != jobs_.end() && HoldsAllocation(leader->second.state)) {
      SetFailure(leader->second, "node", NodeLossEvidence(job, reason));
      RunLostLocked(leader->second, reason, now);
      return;
    }
  }
  if (job.failure_run != job.restart_count || job.failure_cause.empty())
    SetFailure(job, "node", NodeLossEvidence(job, reason));
  if (job.spec->requeue.value_or(true) && !job.cancel_requested) {
    RequeueLocked(job, reason, now);
    return;
  }
  job.reason = "NodeFail";
  // One record, NODE_FAIL: after a restart the job reads NODE_FAIL, never COMPLETED, so its
  // afterok dependents never run.
  EndJobLocked(job, {0, 0, false}, now, JobState::kNodeFail);
}

void Controller::NodeLostLocked(std::uint32_t n, Time now) {
  const std::string& node = cluster_.base.nodes[n].name;
  for (JobId id : std::vector<JobId>(active_.begin(), active_.end())) {
    JobEntry& e = jobs_.at(id);
    if (!HoldsAllocation(e.state)) continue;
    bool on_node = std::any_of(e.placement.begin(), e.placement.end(),
                               [&](const PlacedNode& p) { return p.node == node; });
    if (!on_node) continue;
    const std::string& why = nodes_[n].down_reason;
    SetFailure(e, "node", "node " + node + " lost (" + (why.empty() ? "NodeFail" : why) + ")");
    RunLostLocked(e, "NodeFail", now);
  }
}

}  // namespace lockstep::controller
