// Slurm's filename patterns for job output (sbatch -o/-e, srun -o): "slurm-%j.out",
// "logs/%x_%A_%a.out". Pure functions; safe to call from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/types.h"

namespace lockstep::jobspec {

// What %a expands to outside an array: Slurm's NO_VAL (job_array.html).
inline constexpr std::uint32_t kNoArrayTaskId = 4294967294u;
// The step id of the batch script itself (Slurm's SLURM_BATCH_SCRIPT): %J is then just the job
// id, and %s is "batch".
inline constexpr std::uint32_t kBatchStepId = 0xfffffffbu;

struct OutputPatternVars {
  JobId job_id = 0;
  JobId array_job_id = 0;           // %A; the job's own id when not an array task
  std::uint32_t array_task_id = 0;  // %a, when is_array
  bool is_array = false;
  std::string job_name;                  // %x
  std::string user;                      // %u
  std::string node;                      // %N: short host name
  std::uint32_t node_id = 0;             // %n: relative node index
  std::uint32_t task_id = 0;             // %t: task rank
  std::uint32_t step_id = kBatchStepId;  // %s, and %J = job_id.step_id
  std::uint32_t restart_count = 0;       // %r
};

// Expands a pattern as slurmstepd does (sbatch(1) "filename pattern"):
//   %% a '%'; %A array job id (the job id outside an array); %a array task id (4294967294
//   outside an array); %b array task id modulo 10; %J job_id.step_id (the job id alone for the
//   batch step); %j job id; %N node; %n node id; %s step id ("batch" for the batch step);
//   %t task id; %u user; %x job name; %r restart count.
// A number after '%' zero-pads numeric fields to that width, at most 10 ("%4j" -> "0128").
// Other letters are kept as written. A backslash anywhere turns substitution off: the
// backslashes are removed and the rest is taken literally. A relative result stays relative;
// the caller joins it with the job's work_dir.
std::string ExpandOutputPattern(std::string_view pattern, const OutputPatternVars& vars);

// Slurm's default: "slurm-%j.out", or "slurm-%A_%a.out" for an array job.
std::string DefaultOutputPattern(bool is_array);

}  // namespace lockstep::jobspec
