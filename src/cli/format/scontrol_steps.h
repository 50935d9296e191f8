// `scontrol show steps` from the API's Job objects (docs/api.md), in Slurm 22.05's layout
// (src/api/job_step_info.c, slurm_sprint_job_step_info): one step a paragraph, its first line
// flush left and the rest indented three spaces (-o: one line each). Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cli/format/scontrol.h"
#include "common/status.h"

namespace lockstep::cli {

// The steps that run, of `jobs` (an array of Job objects, {"jobs": [...]}, or one Job, each
// with its "steps"): a running job's batch step, then its srun steps that have not ended, job by
// job. `step` picks one step of each job ("batch" or its number); empty: all of them. No step:
// "" (the caller says Slurm's "No job steps in the system" or "Job step ... not found").
Result<std::string> FormatScontrolShowSteps(const nlohmann::json& jobs, const std::string& step,
                                            const ScontrolOptions& options);

}  // namespace lockstep::cli
