// A job as the policy sees it (policy.h): what sbatch, srun, salloc or the REST API asked for,
// in totals per job.
#pragma once

#include "jobspec/job_spec.h"
#include "policy/policy.h"

namespace lockstep::policy {

// `spec`'s sizes per job, partitions (-p's list), QoS, account and image. Who asks, the default
// account and partition and the default time limit are the caller's to fill in.
Request RequestOfJob(const jobspec::JobSpec& spec, std::string operation);

}  // namespace lockstep::policy
