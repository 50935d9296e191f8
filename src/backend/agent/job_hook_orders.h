// lockstepd's side of Prolog and Epilog (docs/health.md): what the agents' commands carry so
// that each node's agent runs the site's prolog before a job's first task there and its epilog
// once the job has ended there, with the job's SLURM_* variables.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "backend/backend.h"
#include "common/types.h"

namespace lockstep::agent {

struct JobHookSettings {
  std::string program;  // absolute; empty: none
  Seconds timeout = 300;
};

// A run's hook variables: those of every node, and each node's GPUs (SLURM_JOB_GPUS).
struct RunHookEnv {
  std::map<std::string, std::string> common;
  std::map<std::string, std::string> gpus_by_node;  // "0,1,2"
};

// From the batch launch: SLURM_JOB_ID, SLURM_JOB_USER, SLURM_JOB_UID, SLURM_JOB_GID,
// SLURM_JOB_NODELIST, SLURM_JOB_NAME, SLURM_JOB_PARTITION, ... as Slurm gives its prolog.
RunHookEnv HookEnvOfLaunch(const backend::LaunchOrder& order);
// What a step launch alone tells (lockstepd restarted since the batch launch).
RunHookEnv HookEnvOfStep(const backend::StepLaunch& step);

// The "prolog" / "epilog" member of an agent's command for `node`: {program, timeout_s, env}.
nlohmann::json HookOrder(const JobHookSettings& hook, const RunHookEnv& env,
                         const std::string& node);

}  // namespace lockstep::agent
