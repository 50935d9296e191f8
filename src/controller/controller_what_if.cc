// sbatch/srun --test-only: when and where a job would start if it were submitted now, from the
// engine's what-if (engine::plan over the current jobs plus this one), without queuing it.
#include "common/hostlist.h"
#include "controller/controller.h"
#include "controller/job_convert.h"
#include "jobspec/validate.h"

namespace lockstep::controller {

Result<nlohmann::json> Controller::TestOnly(const Caller& caller, jobspec::JobSpec spec) {
  if (!spec.external.empty())
    return PermissionDenied("only lockstepd's backend may submit a job for external pods");
  LOCKSTEP_RETURN_IF_ERROR(jobspec::Validate(spec, ValidationLimits(caller)));
  engine::Snapshot snapshot;
  engine::PolicyOptions policy;
  JobId id = 0;
  std::string partition;
  {
    HeldLock lock(*this);
    LOCKSTEP_RETURN_IF_ERROR(CheckAccountLocked(caller, spec));
    LOCKSTEP_RETURN_IF_ERROR(ValidateSpec(spec, cluster_));
    LOCKSTEP_RETURN_IF_ERROR(CheckSubmitLimitsLocked(caller, spec, 1));
    const Time now = clock_.Now();
    snapshot = BuildSnapshotLocked(now);
    policy = cluster_.policy;
    // The id it would get; nothing is queued, so the next submission may get it too.
    JobEntry probe;
    probe.id = id = next_job_id_;
    probe.uid = caller.uid;
    probe.gid = caller.gid;
    probe.user = caller.user;
    probe.submit_time = now;
    probe.held_by_user = spec.hold;
    spec.array.reset();  // Slurm answers for the first task of an array
    probe.spec = std::make_shared<const jobspec::JobSpec>(std::move(spec));
    engine::Job job = ToEngineJob(probe, cluster_);
    partition = cluster_.base.partitions[job.partition].name;
    snapshot.pending.push_back(std::move(job));
    snapshot.associations = cluster_.base.associations;  // the probe's user may be new
    snapshot.accounts = cluster_.base.accounts;
  }
  // The pure planner, off the lock: the scheduler's own state is left alone.
  const engine::Plan plan = engine::plan(snapshot, policy);
  nlohmann::json out = {{"job_id", id}, {"partition", partition}};
  auto describe = [&](const engine::Allocation& a) {
    std::vector<std::string> names;
    std::int64_t cpus = 0;
    for (const engine::NodeAllocation& n : a.nodes) {
      names.push_back(snapshot.nodes[n.node].name);
      cpus += n.cpus;
    }
    out["nodes"] = CompressHostlist(names);
    out["cpus"] = cpus;
  };
  for (const engine::Start& s : plan.starts) {
    if (s.job != id) continue;
    out["start"] = snapshot.now;
    describe(s.allocation);
    return out;
  }
  for (const engine::Pending& p : plan.pending) {
    if (p.job != id) continue;
    out["reason"] = engine::PendingReasonName(p.reason);
    out["start"] = p.expected_start;  // 0: not known
    if (p.reserved) describe(p.reservation);
  }
  return out;
}

}  // namespace lockstep::controller
