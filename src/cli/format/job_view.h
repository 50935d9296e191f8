// Reads of the API's Job object (docs/api.md) that squeue, sacct and scontrol share: ids as
// Slurm prints them, states, run time and time limit. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/types.h"

namespace lockstep::cli {

// squeue's compact state code (job_state_string_compact): PENDING -> "PD", RUNNING -> "R",
// COMPLETING -> "CG", COMPLETED -> "CD", CANCELLED -> "CA", FAILED -> "F", TIMEOUT -> "TO",
// NODE_FAIL -> "NF", PREEMPTED -> "PR", OUT_OF_MEMORY -> "OOM", and Slurm's rarer states.
// An unknown state is returned as it is.
std::string CompactJobState(std::string_view state);

// The job's state, upper case ("PENDING" when missing).
std::string JobState(const nlohmann::json& job);

bool IsPendingState(std::string_view state);
// Running or completing: the job holds nodes and its clock runs.
bool IsActiveState(std::string_view state);

// `array_task_str` without the brackets the API may wrap it in: "[5-1024%4]" -> "5-1024%4".
// Empty when the record is not a pending array.
std::string ArrayTaskString(const nlohmann::json& job);

// The array task id when the record is one task of an array (array_job_id set and
// array_task_id present).
std::optional<std::int64_t> ArrayTaskId(const nlohmann::json& job);

// The job id as squeue's %i and sacct's JobID show it: "1080_[5-1024%4]" for a pending array,
// "40_2" for an array task, "42" otherwise. `task_override` replaces the array task id (for a
// pending array expanded one task a line).
std::string DisplayJobId(const nlohmann::json& job,
                         std::optional<std::int64_t> task_override = std::nullopt);

// Seconds the job has run (Slurm's job_time_used): 0 while pending or not started; now - start
// while running or when no end is known; end - start once finished.
Seconds JobTimeUsed(const nlohmann::json& job, Time now);

// The job's time limit: `unlimited` when the API sends null, `unset` when the key is missing.
struct TimeLimit {
  bool unlimited = false;
  bool unset = false;
  Seconds seconds = 0;
};
TimeLimit JobTimeLimit(const nlohmann::json& job);

// "code:signal" as sacct's ExitCode and scontrol's ExitCode= show it.
std::string ExitCodeString(const nlohmann::json& object);

// The job's expected or actual start: start_time, else expected_start for a pending job, else 0.
Time JobStartOrExpected(const nlohmann::json& job);

}  // namespace lockstep::cli
