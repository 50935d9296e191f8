// Heterogeneous jobs (sbatch -n8 ... : -n1 ...): each component is a job of its own, with
// consecutive ids, the first (the leader) running the script. The engine starts them together
// (engine/pass_het.cc); here they are submitted as one, and their lives are tied: the others
// have no run of their own, they hold their nodes for the leader's steps and end when it ends.
#include <algorithm>

#include "controller/controller.h"
#include "controller/controller_internal.h"
#include "jobspec/validate.h"

namespace lockstep::controller {

Result<JobId> Controller::SubmitHetAs(const Caller& caller, jobspec::JobSpec leader) {
  std::vector<jobspec::JobSpec> specs;
  specs.push_back(std::move(leader));
  for (jobspec::JobSpec& c : specs.front().het_components) specs.push_back(std::move(c));
  specs.front().het_components.clear();
  if (specs.size() > jobspec::kMaxHetComponents)
    return InvalidArgument("a heterogeneous job has at most " +
                           std::to_string(jobspec::kMaxHetComponents) + " components");
  std::vector<StoredTargets> stored;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    jobspec::JobSpec& spec = specs[i];
    const std::string where = "heterogeneous job component " + std::to_string(i) + ": ";
    if (spec.array) return InvalidArgument(where + "a heterogeneous job cannot be a job array");
    if (i > 0 && !spec.script.empty())
      return InvalidArgument(where + "only the first component runs a script");
    if (!spec.het_components.empty())
      return InvalidArgument(where + "components are not nested");
    Status st = jobspec::Validate(spec, ValidationLimits(caller));
    if (st.ok()) st = CheckJobPolicy(caller, spec);
    if (!st.ok()) return Status(st.code(), where + st.message());
    Result<StoredTargets> targets = ReadStoredTargets(spec);
    if (!targets.ok()) return targets.status();
    stored.push_back(std::move(*targets));
  }
  JobId first = 0;
  {
    HeldLock lock(*this);
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (Status st = AdmitSpecLocked(caller, specs[i], stored[i], 1, i == 0); !st.ok())
        return Status(st.code(),
                      "heterogeneous job component " + std::to_string(i) + ": " + st.message());
    }
    first = next_job_id_;
    next_job_id_ += specs.size();
  }
  jobspec::JobSpec& lead = specs.front();
  nlohmann::json blob = {
      {"script", lead.script}, {"env", lead.environment}, {"args", lead.script_args}};
  std::vector<store::Record> records = {{"scripts", ScriptKey(first), blob.dump()}};
  std::vector<JobEntry> entries;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    specs[i].script.clear();
    specs[i].environment.clear();
    specs[i].warnings.clear();
    JobEntry& e = entries.emplace_back();
    e.id = first + i;
    e.uid = caller.uid;
    e.gid = caller.gid;
    e.user = caller.user;
    e.submit_time = clock_.Now();
    e.held_by_user = specs[i].hold;
    e.het_job_id = first;
    e.het_offset = static_cast<std::uint32_t>(i);
    e.het_size = static_cast<std::uint32_t>(specs.size());
  }
  store::PendingWrite write;
  {
    HeldLock lock(*this);
    for (std::size_t i = 0; i < entries.size(); ++i) {
      JobEntry& e = entries[i];
      e.spec = specs_.Intern(std::move(specs[i]));
      records.push_back({"jobs", JobKey(e.id), RecordOfLocked(e)});
      const JobId id = e.id;
      TouchLocked(jobs_.emplace(id, std::move(e)).first->second);
      JobEventLocked("submitted", jobs_.at(id), 0);
    }
    write = QueueWriteLocked(std::move(records));
    stats_.RecordSubmitted(entries.size());
    RequestPassLocked();
  }
  LOCKSTEP_RETURN_IF_ERROR(Durable(std::move(write)));
  return first;
}

std::vector<JobEntry*> Controller::HetComponentsLocked(const JobEntry& any) {
  std::vector<JobEntry*> out;
  for (JobId id = any.het_job_id; id < any.het_job_id + any.het_size; ++id)
    if (auto it = jobs_.find(id); it != jobs_.end()) out.push_back(&it->second);
  return out;
}

store::PendingWrite Controller::CancelHetLocked(JobEntry& e) {
  if (!e.is_het_leader()) return CancelLocked(e);
  store::PendingWrite write;
  // The others first: the leader's end would end them as it ended, not as cancelled.
  for (JobEntry* c : HetComponentsLocked(e))
    if (c != &e && !IsFinished(c->state)) write = CancelLocked(*c);
  write = CancelLocked(e);
  return write;
}

std::vector<JobEntry*> Controller::WholeJobLocked(JobEntry& e) {
  return e.is_het_leader() ? HetComponentsLocked(e) : std::vector<JobEntry*>{&e};
}

void Controller::EndHetComponentsLocked(const JobEntry& leader, Time now) {
  for (JobEntry* c : HetComponentsLocked(leader)) {
    if (c->het_offset == 0 || !HoldsAllocation(c->state)) continue;
    EndJobLocked(*c, {leader.exit_code, leader.signal, false}, now, leader.state);
  }
}

Result<JobEnvInput> Controller::StepAllocationLocked(const JobEntry& job,
                                                     const std::vector<int>& groups) {
  if (job.is_het_component() && !job.is_het_leader())
    return FailedPrecondition("job " + job.DisplayId() + " is a component of heterogeneous job " +
                              std::to_string(job.het_job_id) + ": run steps in it (srun --jobid=" +
                              std::to_string(job.het_job_id) + " --het-group=" +
                              std::to_string(job.het_offset) + ")");
  const int highest = job.is_het_component() ? static_cast<int>(job.het_size) - 1 : 0;
  for (int g : groups)
    if (g > highest)
      return InvalidArgument("Requested het-group offset exceeds highest hetjob index (" +
                             std::to_string(g) + " > " + std::to_string(highest) + ")");
  JobEnvInput in = EnvInputLocked(job);
  if (groups.empty() || (groups.size() == 1 && groups.front() == 0)) return in;
  // In pods, a step runs in the job's own pods: the other components have none.
  if (jobs_in_images_)
    return FailedPrecondition(
        "step: this backend runs a heterogeneous job's steps in its first component only "
        "(its pods); other components need lockstep's agents");
  if (in.het_components.size() != job.het_size)
    return FailedPrecondition("job " + job.DisplayId() + ": a component's record is not in memory");
  // The step's view of the allocation: the chosen components' nodes, in order, each with what
  // its component holds there.
  JobEnvInput step = in;
  step.nodes.clear();
  step.cpus_per_node.clear();
  step.gpus_per_node.clear();
  step.cuda_devices_per_node.clear();
  step.tasks_per_node.clear();
  step.ntasks = 0;
  for (int g : groups) {
    const JobEnvInput& c = in.het_components[static_cast<std::size_t>(g)];
    auto append = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
    append(step.nodes, c.nodes);
    append(step.cpus_per_node, c.cpus_per_node);
    append(step.gpus_per_node, c.gpus_per_node);
    append(step.cuda_devices_per_node, c.cuda_devices_per_node);
    append(step.tasks_per_node, c.tasks_per_node);
    step.ntasks += c.ntasks;
  }
  const JobEnvInput& first = in.het_components[static_cast<std::size_t>(groups.front())];
  step.master_addr = first.master_addr;
  if (groups.size() == 1) {  // one component: its name and partition, as Slurm shows them
    step.job = first.job;
    step.partition = first.partition;
    step.account = first.account;
    step.qos = first.qos;
  }
  return step;
}

}  // namespace lockstep::controller
