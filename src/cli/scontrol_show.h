// scontrol show steps and show topology (scontrol_show.cc): the request, Slurm's messages and
// exit codes around the formatters (cli/format/scontrol_steps.h, scontrol_topology.h).
#pragma once

#include <string>

#include "client/api_client.h"

namespace lockstep::cli {

// `scontrol show steps [JOBID[.STEP]]`: the running steps, or "No job steps in the system";
// a job's step that does not run: "Job step 42.0 not found" (exit 1); an unknown job:
// "slurm_get_job_steps error: Invalid job id specified" (exit 1). `oneliner`: -o.
int ShowSteps(client::ApiClient& api, const std::string& id, bool oneliner);

// `scontrol show topology [NAME]`: the switches (or blocks); without any, Slurm's error "No
// topology information available", which leaves the exit code 0 as Slurm's does.
int ShowTopology(client::ApiClient& api, const std::string& name);

}  // namespace lockstep::cli
