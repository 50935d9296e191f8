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
#include <map>
#include <string>
#include <string_view>

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

// Slurm's fixed bounds on the text of a submission (slurmctld's job_create_request), refused
// with its words "Pathname of a file, directory or other parameter too long".
inline constexpr std::uint64_t kMaxShortText = 1024;      // account, partition, QoS, features
inline constexpr std::uint64_t kMaxPathText = 4096;       // --chdir, --output, --error, image
inline constexpr std::uint64_t kMaxHostlistText = 65536;  // --nodelist, --exclude
inline constexpr std::uint64_t kMaxArrayText = 4096;      // --array as written
inline constexpr std::uint64_t kNoSizeLimit = std::numeric_limits<std::uint64_t>::max();

struct Limits {
  // Operators (root and lockstepd's --operator uids) may give a negative nice; nobody else may.
  // The CLI, which cannot know, passes true and leaves that check to lockstepd.
  bool caller_is_operator = false;
  // The cluster's limits on sizes (config::SubmitLimits); the CLI, which cannot know them,
  // leaves them unlimited and lockstepd checks.
  std::uint64_t max_name_length = kNoSizeLimit;  // bytes of the job's name
  std::uint64_t max_script_size = kNoSizeLimit;  // of the script, and of its arguments together
  std::uint64_t max_env_size = kNoSizeLimit;     // NAME=VALUE plus a NUL, per variable
};

// Ok, or Slurm's "Pathname of a file, directory or other parameter too long" naming `what`, its
// `size` and the limit ("more than max_name_length=1024"; `limit_name` empty: "more than 1024").
Status CheckSize(std::string_view what, std::uint64_t size, std::string_view limit_name,
                 std::uint64_t limit);

// Bytes of `env` as execve takes it: NAME=VALUE and a NUL per variable.
std::uint64_t EnvironmentSize(const std::map<std::string, std::string>& env);

// Ok, or the first problem found. Changes nothing.
Status Validate(const JobSpec& spec, const Limits& limits);

}  // namespace lockstep::jobspec
