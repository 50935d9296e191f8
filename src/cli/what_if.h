// sbatch/srun --test-only: asks lockstepd when and where the job would start (POST
// /api/v1/jobs/test, the engine's what-if; nothing is queued) and prints Slurm's line:
//   sbatch: Job 42 to start at 2026-12-02T17:40:12 using 8 processors on nodes gpu[1-2] in partition batch
#pragma once

#include <string>

#include "client/api_client.h"
#include "jobspec/job_spec.h"

namespace lockstep::cli {

// The exit code: 0 with the line on stderr (as Slurm prints it), 1 with the refusal.
int ReportTestOnly(const std::string& command, client::ApiClient& api, const jobspec::JobSpec& spec);

// The line for lockstepd's answer (pure, for tests); `start` 0 prints "Unknown".
std::string TestOnlyLine(const std::string& command, const nlohmann::json& answer);

}  // namespace lockstep::cli
