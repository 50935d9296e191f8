// The one range check of a submitted JobSpec: every number a user gives is within Slurm's
// documented range, and every product lockstep forms from them (CPUs of the job and of a node,
// GPUs, memory) fits the type that holds it, so nothing downstream (the engine's shapes, TRES
// sums, the agents) ever sees a wrapped value. Called by the CLI after parsing sbatch/srun
// options and by lockstepd before it accepts a submission. Pure; safe from any thread.
//
// Text that decides what the job runs and where (the script, its arguments, --chdir, --output,
// --error) must be UTF-8, which is all the API and the store carry byte for byte.
//
// Errors are one line naming the option as sbatch spells it ("--cpus-per-task=2 with
// --ntasks=2147483647 asks for 4294967294 CPUs, more than 2147483647"); the caller adds its
// prefix ("sbatch: "). A negative nice from a caller who is not an operator is PermissionDenied,
// everything else InvalidArgument.
#pragma once

#include <cstdint>
#include <limits>

#include "common/status.h"
#include "common/types.h"
#include "jobspec/job_spec.h"

namespace lockstep::jobspec {

// Slurm's documented bounds.
inline constexpr std::int64_t kMaxNice = 2147483645;        // sbatch(1) --nice: +/- 2147483645
inline constexpr std::uint32_t kMaxArrayIndex = 4'000'000;  // slurm.conf MaxArraySize <= 4000001
inline constexpr std::uint64_t kMaxArrayTasks = 4'000'001;
// Time limits are whole minutes below Slurm's INFINITE (0xffffffff minutes), or unlimited.
inline constexpr Seconds kMaxTimeLimit = Seconds{0xfffffffe} * 60;
// CPUs, GPUs and tasks are counted in int32 (per node and per job).
inline constexpr std::int64_t kMaxResourceCount = std::numeric_limits<std::int32_t>::max();
// Memory of one node, and of the whole job, in MB: 2^40 MB (1 EiB), so that the sum over a
// million running jobs still fits an int64.
inline constexpr std::int64_t kMaxMemoryMb = std::int64_t{1} << 40;

struct Limits {
  // Operators (root and lockstepd's --operator uids) may give a negative nice; nobody else may.
  // The CLI, which cannot know, passes true and leaves that check to lockstepd.
  bool caller_is_operator = false;
};

// Ok, or the first problem found. Changes nothing.
Status Validate(const JobSpec& spec, const Limits& limits);

}  // namespace lockstep::jobspec
