// What `scontrol update JobId=` asks of a job (docs/api.md, PATCH /api/v1/jobs/{id}), each value
// decoded and range-checked. Whether the job, its user and the cluster allow the change is the
// controller's check: controller_update.cc (time limit, priority, nice, name, account, comment)
// and controller_update_pending.cc (what only a pending job may change). Internal to the
// controller.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"
#include "common/types.h"
#include "controller/controller.h"
#include "jobspec/job_spec.h"

namespace lockstep::controller {

// The fields only a pending job may change (Slurm's ESLURM_JOB_NOT_PENDING, "Job is no longer
// pending execution", for any other), and an array's throttle, which any array may change.
struct PendingJobChanges {
  std::optional<std::string> partition;             // Partition=
  std::optional<std::string> qos;                   // QOS=
  std::optional<std::int32_t> min_nodes, max_nodes;  // NumNodes=N[-M] (max 0: as min)
  std::optional<std::int32_t> num_cpus;              // NumCPUs=: the job's CPUs, at least
  std::optional<std::int64_t> mem_per_node_mb;       // MinMemoryNode=
  std::optional<std::int64_t> mem_per_cpu_mb;        // MinMemoryCPU=
  // Gres=/TresPerNode=: GPUs per node and their type ("" any); count 0 clears.
  std::optional<std::pair<std::int32_t, std::string>> gpus_per_node;
  std::optional<std::string> nodelist;  // ReqNodeList= / NodeList=
  std::optional<std::string> exclude;   // ExcNodeList=
  // Dependency= as parsed (an empty list: cleared).
  std::optional<std::pair<std::vector<jobspec::DependencySpec>, bool>> dependencies;
  std::optional<Time> begin_time;  // StartTime=, as a Unix time (0: now)
  // ArrayTaskThrottle=: an array's "%N" (0: none); not pending-only.
  std::optional<std::uint32_t> array_throttle;

  // Whether anything but the throttle is asked (those refuse on a job that is not pending).
  bool any_pending_only() const {
    return partition || qos || min_nodes || num_cpus || mem_per_node_mb || mem_per_cpu_mb ||
           gpus_per_node || nodelist || exclude || dependencies || begin_time;
  }
  bool any() const { return any_pending_only() || array_throttle; }
};

// Decodes one PendingJobChanges key of an update's body into `c`: true when `key` is one of
// them, false when it is not, or why its value is bad (InvalidArgument naming the key).
Result<bool> DecodePendingChange(const std::string& key, const nlohmann::json& value,
                                 PendingJobChanges& c);

struct Controller::JobChanges {
  std::optional<Seconds> time_limit;      // the new limit
  std::optional<Seconds> time_limit_add;  // or the current one moved by this much (+N/-N)
  std::optional<std::uint32_t> priority;
  std::optional<int> nice;
  std::optional<std::string> name;
  std::optional<std::string> account;  // of a pending job, one of its user's associations
  std::optional<std::string> comment;  // of any job not finished, as Slurm allows (the entry's)
  PendingJobChanges pending;
  bool changes_spec() const {
    return time_limit || time_limit_add || nice || name || account || pending.any();
  }
};

}  // namespace lockstep::controller
