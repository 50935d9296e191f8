// How a backend queues work that others created (the Kubernetes pod-group scheduler's gangs):
// a narrow, typed interface that lockstepd's controller implements. It is not the users' API:
// no Caller is involved, no request can reach it, and only it may submit a job that stands for
// external pods (JobSpec::external), which belongs to the user "k8s:<namespace>".
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/types.h"
#include "jobspec/job_spec.h"

namespace lockstep::backend {

// A job that stands for external pods, as the controller has it now.
struct ExternalJob {
  enum class Phase { kPending, kRunning, kEnded };
  JobId job = 0;
  std::int32_t run = 0;  // its restart count
  std::string key;       // JobSpec::external ("namespace/group"); may be empty in old stores
  std::string name, user;
  Phase phase = Phase::kPending;
  std::string state;     // Slurm's name of its state ("CANCELLED"), for messages
  std::string features;  // its constraint
  std::int32_t node_count = 1;
};

// Thread-safety: every method may be called from any thread, never with the caller's own locks
// that the controller's events might need (the controller never calls back into the caller
// from these).
class Admission {
 public:
  virtual ~Admission() = default;
  // Queues a job for external pods: `spec.external` must name them and `ns` is their
  // namespace. Durable when it returns.
  virtual Result<JobId> Admit(jobspec::JobSpec spec, const std::string& ns) = 0;
  // Cancels a job that Admit queued (its pods are gone).
  virtual Status Withdraw(JobId job) = 0;
  // Jobs that stand for external pods; with `only`, just those of these ids.
  virtual std::vector<ExternalJob> ExternalJobs(const std::set<JobId>* only) const = 0;
  // Node features for placement constraints the backend evaluates itself (pods' node
  // selectors, affinities, tolerations): each feature of `features` is on exactly the nodes
  // named. Replaces what an earlier call gave. FailedPrecondition, and nothing changed, when a
  // node would need more than 64 features or a name is one of the nodes' own features.
  virtual Status SetPlacementFeatures(const std::map<std::string, std::set<std::string>>& features) = 0;
  // The nodes the controller places on now: those configured and those the backend reported
  // and the controller has applied (reports are queued). A gang scheduler waits for the first
  // report to be applied before it submits, so that no gang is judged against an empty cluster.
  virtual std::size_t KnownNodes() const = 0;
};

}  // namespace lockstep::backend
