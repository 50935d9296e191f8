// scontrol suspend|resume JOBID[,JOBID...] (scontrol_suspend.cc).
#pragma once

#include <string>

#include "client/api_client.h"

namespace lockstep::cli {

// `op` "suspend" or "resume". Each job in turn; a refusal prints Slurm's line ("Job is not
// running for job 42") on stderr and the exit code becomes 1. `quiet` (-Q) prints nothing.
int SuspendJobs(client::ApiClient& api, const std::string& op, const std::string& ids, bool quiet);

}  // namespace lockstep::cli
