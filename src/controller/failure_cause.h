// Failure attribution (docs/health.md): why a job's run did not complete, decided from how it
// ended when nothing more specific (a GPU fault, a lost node, a failed launch, a preemption) was
// recorded for that run first. Pure functions over the job record.
#pragma once

#include <string>

#include "backend/backend.h"
#include "controller/job_entry.h"

namespace lockstep::controller {

// Sets the job's failure cause for the run that just ended in `job.state` (empty when it
// completed), unless one was recorded for this run already.
void AttributeEnd(JobEntry& job, const backend::ExitStatus& status, Seconds kill_wait);

// The evidence of a run lost with its node: "node node3 lost (NodeFail)".
std::string NodeLossEvidence(const JobEntry& job, const std::string& reason);

}  // namespace lockstep::controller
