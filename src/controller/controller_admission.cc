// backend::Admission: jobs that stand for pods others created (Kubernetes pod groups), queued
// by the backend itself, never by a user's request.
#include "controller/controller.h"
#include "controller/controller_internal.h"

namespace lockstep::controller {

Result<JobId> Controller::Admit(jobspec::JobSpec spec, const std::string& ns) {
  if (spec.external.empty())
    return InvalidArgument("admission: the job must name the external pods it stands for");
  // The owner is the namespace's pseudo-user, root's uid: such a job never runs a process.
  return SubmitAs(Caller{0, 0, "k8s:" + ns}, std::move(spec));
}

std::size_t Controller::KnownNodes() const {
  HeldLock lock(*this);
  return cluster_.base.nodes.size();
}

Status Controller::Withdraw(JobId id) {
  store::PendingWrite write;
  {
    HeldLock lock(*this);
    Result<JobEntry*> found = FindLocked(id);
    if (!found.ok()) return found.status();
    JobEntry& e = **found;
    if (e.spec->external.empty() && e.user.rfind("k8s:", 0) != 0)
      return PermissionDenied("admission: job " + e.DisplayId() + " is not a job for pods");
    if (IsFinished(e.state)) return Status::Ok();
    write = CancelLocked(e);
  }
  return Durable(std::move(write));
}

std::vector<backend::ExternalJob> Controller::ExternalJobs(const std::set<JobId>* only) const {
  std::vector<backend::ExternalJob> out;
  HeldLock lock(*this);
  auto add = [&](const JobEntry& e) {
    // Stores from before JobSpec::external name such jobs "<namespace>/<gang>", user "k8s:<ns>".
    const bool legacy =
        e.user.rfind("k8s:", 0) == 0 && e.spec->name.find('/') != std::string::npos;
    if (e.spec->external.empty() && !legacy) return;
    backend::ExternalJob j;
    j.job = e.id;
    j.run = e.restart_count;
    j.key = e.spec->external;
    j.name = e.spec->name;
    j.user = e.user;
    j.phase = e.state == JobState::kPending ? backend::ExternalJob::Phase::kPending
              : HoldsAllocation(e.state)
                  ? backend::ExternalJob::Phase::kRunning
                  : backend::ExternalJob::Phase::kEnded;
    j.state = JobStateName(e.state);
    j.features = e.spec->constraint;
    j.node_count = std::max(1, e.spec->min_nodes);
    out.push_back(std::move(j));
  };
  if (only) {
    for (JobId id : *only)
      if (auto it = jobs_.find(id); it != jobs_.end()) add(it->second);
  } else {
    for (const auto& [id, e] : jobs_) add(e);
  }
  return out;
}

}  // namespace lockstep::controller
