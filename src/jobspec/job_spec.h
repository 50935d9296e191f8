// What a user submits: sbatch's options and script, as one value that the CLI builds, the REST
// API carries as JSON, the store keeps and the controller turns into an engine Job.
//
// Unset numeric options are 0 (or -1 where 0 is meaningful); unset strings are empty. Slurm's
// precedence: command line over SBATCH_* environment over #SBATCH lines.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/types.h"

namespace lockstep::jobspec {

struct ArraySpec {
  std::vector<std::uint32_t> indices;  // expanded, ascending, unique
  std::uint32_t max_running = 0;       // "%N"; 0: no throttle
  std::string text;                    // as written: "0-15:4%2"
  // What lockstepd keeps of `indices` once it drops them (a 4,000,000-task array's are 16 MB):
  // the count, the first and the last; 0 while `indices` are there.
  std::uint32_t count = 0, min = 0, max = 0;
  bool operator==(const ArraySpec&) const = default;
};

// kAfterCorr (Slurm's aftercorr): each task of an array waits for the task of the same index of
// the target array to complete successfully (lockstepd resolves the task, controller_depend.cc).
enum class DependencyType : std::uint8_t {
  kAfter, kAfterAny, kAfterOk, kAfterNotOk, kSingleton, kAfterCorr
};

struct DependencySpec {
  DependencyType type = DependencyType::kAfterAny;
  JobId job = 0;                 // 0 for singleton
  std::uint32_t array_task = 0;  // with has_task: "after:123_4"
  bool has_task = false;
  // after:ID+MIN: the job may start MIN minutes after ID started (or was cancelled); 0: at once.
  std::int32_t delay_minutes = 0;
  bool operator==(const DependencySpec&) const = default;
};

// Slurm's MAX_HET_JOB_COMPONENTS: the most components a heterogeneous job may have.
inline constexpr std::size_t kMaxHetComponents = 128;

struct JobSpec {
  // Identity and placement.
  std::string name;       // -J; default: the script's file name, or "wrap"
  std::string partition;  // -p
  std::string account;    // -A
  std::string qos;        // -q
  std::string reservation;  // --reservation: a reservation's name (lockstepd checks access)
  // Size.
  std::int32_t min_nodes = 0;  // -N a[-b]; 0: not given
  std::int32_t max_nodes = 0;
  std::int32_t ntasks = 0;  // -n
  std::int32_t ntasks_per_node = 0;
  std::int32_t cpus_per_task = 0;  // -c
  // --cpus-per-gpu: each node gets this many CPUs per GPU it gives the job (cpus_per_gpu.h);
  // never with cpus_per_task.
  std::int32_t cpus_per_gpu = 0;
  std::int64_t mem_mb = 0;         // --mem (per node)
  bool mem_whole_node = false;     // --mem=0: all the memory of each node (mem_mb stays 0)
  std::int64_t mem_per_cpu_mb = 0;
  std::int64_t mem_per_gpu_mb = 0;
  std::int32_t gpus = 0;           // -G/--gpus [type:]N
  std::int32_t gpus_per_node = 0;  // --gpus-per-node, --gres=gpu[:type]:N
  std::int32_t gpus_per_task = 0;
  std::string gpu_type;  // from any of the GPU options
  bool exclusive = false;
  bool exclusive_user = false;  // --exclusive=user: nodes shared only with this user's jobs
  std::string constraint;         // -C: features joined by '&'
  std::string nodelist;           // -w: hostlist of nodes the allocation must include
  std::string exclude;            // -x: hostlist of nodes it must not use
  std::int32_t max_switches = 0;  // --switches=N[@time]
  Seconds switches_wait = 0;
  // Time.
  Seconds time_limit = 0;  // -t; 0: partition default
  Time begin_time = 0;     // --begin, as a Unix time; 0: now
  // --signal=[{R|B}:]SIG[@TIME]: SIG is sent TIME seconds before the time limit (0: none), to
  // the batch shell only with B:, else to the job's steps.
  std::int32_t signal_number = 0;
  Seconds signal_time = 0;
  bool signal_batch_only = false;
  // Control.
  std::optional<ArraySpec> array;            // -a/--array
  std::vector<DependencySpec> dependencies;  // -d
  bool dependencies_any = false;             // joined by '?'
  std::optional<bool> requeue;  // --requeue / --no-requeue; unset: the cluster's default
  bool hold = false;            // -H
  std::int32_t nice = 0;
  // Running.
  std::string work_dir;             // -D; default: the submit directory
  std::string output;               // -o pattern; default slurm-%j.out (slurm-%A_%a.out for arrays)
  std::string error;                // -e pattern; default: with output
  std::string export_mode = "ALL";  // --export: ALL, NONE, or a list "ALL,VAR=x,OTHER"
  std::map<std::string, std::string> environment;  // what the job starts with (after --export)
  std::string script;                              // the batch script's text (--wrap makes one)
  std::vector<std::string> script_args;
  std::string container_image;  // --container-image (Kubernetes backend)
  // --container-mounts, as given ("SRC[:DST[:ro|rw]],..."; container_mounts.h): binds of
  // directories on declared file systems into the job's pods (Kubernetes backend).
  std::string container_mounts;
  // Set by the Kubernetes backend only: the job stands for a group of pods that others created
  // ("namespace/group"), which are bound to its allocation rather than launched.
  std::string external;
  // sacct's SubmitLine: the command line the job was submitted with, as the CLI saw it.
  std::string submit_line;
  // A heterogeneous job (sbatch ... : ..., #SBATCH hetjob): this spec is its first component
  // (the one the script runs in), these are the others in order. lockstepd makes each a job of
  // its own with consecutive ids; none of them has components of its own.
  std::vector<JobSpec> het_components;
  // Output of the CLI only.
  bool parsable = false;  // --parsable
  bool wait = false;      // -W/--wait: sbatch returns when the job ends (not in the JSON)
  bool test_only = false;  // --test-only: when it would start, nothing queued (not in the JSON)
  // Slurm options accepted without effect in lockstep ("--mail-type"), one line each with its
  // place, for the CLI to print as warnings. Added by the sbatch parser.
  std::vector<std::string> warnings;

  bool operator==(const JobSpec&) const = default;
};

// The request as JSON (the REST API's body) and back. FromJson rejects unknown keys and wrong
// types with a message naming the key.
std::string JobSpecToJson(const JobSpec& spec);
Result<JobSpec> JobSpecFromJson(std::string_view json);

}  // namespace lockstep::jobspec
