// The environment a job's processes start with: Slurm's variables (sbatch(1) and srun(1),
// "OUTPUT ENVIRONMENT VARIABLES") and PyTorch's (MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK,
// LOCAL_RANK), so scripts written for Slurm and torch.distributed run unchanged.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "controller/job_entry.h"
#include "config/cluster_config.h"

namespace lockstep::controller {

// What the environment is made from, resolved once per launch.
struct JobEnvInput {
  const JobEntry* job = nullptr;
  std::string partition, account, qos;
  std::vector<std::string> nodes;  // the allocation, in order
  std::vector<std::int32_t> cpus_per_node;
  std::vector<std::vector<int>> gpus_per_node;  // device indices on each node
  // What CUDA_VISIBLE_DEVICES names them by, in the same order (CudaDeviceNames).
  std::vector<std::vector<std::string>> cuda_devices_per_node;
  std::vector<std::int32_t> tasks_per_node;
  std::int32_t ntasks = 1;
  std::string master_addr;  // the first node's address
  int master_port = 0;
  std::uint32_t array_min = 0, array_max = 0, array_count = 0;
  // A heterogeneous job's leader: every component's own input, leader first, for the
  // SLURM_*_HET_GROUP_<n> variables (and Slurm 17.11's _PACK_GROUP_ names of them).
  std::vector<JobEnvInput> het_components;
};

// SLURM_HET_SIZE, and the variables that describe each component (SLURM_JOB_ID_HET_GROUP_1,
// SLURM_JOB_NODELIST_HET_GROUP_1, ...), as Slurm sets them in a heterogeneous job.
void AddHetGroupVariables(const JobEnvInput& in, std::map<std::string, std::string>& env);

// How CUDA_VISIBLE_DEVICES names each GPU device of a node, by device index: a whole GPU by
// its index among the node's physical GPUs (which differs from its device index after a GPU cut
// into MIG slices), a MIG slice by its UUID ("MIG-...") from the node's inventory; a slice
// whose UUID is not known (virtual GPUs) by its device index.
std::vector<std::string> CudaDeviceNames(const engine::Node& node);

JobEnvInput MakeJobEnvInput(const JobEntry& job, const config::ClusterConfig& cluster,
                            const std::function<std::string(const std::string&)>& address_of);

// The batch script's environment (it runs on the first node as task 0).
std::map<std::string, std::string> BatchEnvironment(
    const JobEnvInput& in, const std::map<std::string, std::string>& submit_env);

// One task of a step: its global rank, its node's index and its rank on that node.
struct StepTask {
  std::int32_t step_id = 0;
  std::int32_t rank = 0, node_index = 0, local_rank = 0;
  std::int32_t step_tasks = 1;
  std::vector<std::string> step_nodes;
  std::vector<std::int32_t> step_tasks_per_node;
  std::vector<int> gpus;  // devices this task sees (their indices)
  std::vector<std::string> cuda_devices;  // and their names for CUDA_VISIBLE_DEVICES
};
std::map<std::string, std::string> StepTaskEnvironment(
    const JobEnvInput& in, const StepTask& t, const std::map<std::string, std::string>& base);

}  // namespace lockstep::controller
