// Where jobs run: DESIGN.md's backend contract, as lockstepd uses it. lockstep's own agents are
// the default backend, built into the controller (agents call its agent API and long-poll for
// commands). Another backend (Kubernetes, src/backend/kubernetes) implements `Backend` and is
// attached with Controller::AttachBackend; it reports what happens through the Controller's
// Backend* calls.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/types.h"
#include "controller/job_entry.h"

namespace lockstep::controller {

// Everything needed to start a job's batch step on its allocation.
struct LaunchOrder {
  JobId job = 0;
  std::int32_t run =
      0;  // the job's restart count: events name it, so an old run's end is not this one's
  std::string name;
  std::string user;
  std::uint32_t uid = 0, gid = 0;
  std::string partition;
  std::string work_dir;
  std::string script;  // the batch script's text
  std::vector<std::string> script_args;
  std::map<std::string, std::string> env;  // the batch environment (job_env.h), for rank 0
  std::vector<PlacedNode> nodes;           // the allocation, first node first
  std::vector<std::int32_t> tasks_per_node;
  std::string container_image;  // sbatch --container-image; empty: the backend's default
  std::string stdout_path, stderr_path;
  Seconds time_limit = 0;  // 0: none
  // Set when the job stands for pods that others created (a pod group): the backend binds
  // them to the allocation's nodes instead of creating anything.
  std::string external;
};

// A node as the backend sees it, by names: the controller maps the names to its indexes.
struct NodeReport {
  std::string name;
  std::int32_t cpus = 0;
  std::int64_t mem_mb = 0;
  std::vector<std::string> gpus;  // one GPU type name per device, in device order
  std::vector<std::string> features;
  std::vector<std::string> switches;  // topology path from the top switch to the leaf
  std::string block;
  std::string address;  // where its tasks can be reached (MASTER_ADDR)
  bool ready = true;    // false: DOWN, with down_reason
  std::string down_reason;
  bool cordoned = false;  // DRAIN with reason "cordoned", until uncordoned
  // Taken by work lockstep did not place (pods of other schedulers).
  std::int32_t used_cpus = 0;
  std::int64_t used_mem_mb = 0;
  std::int32_t used_gpus = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // Each call is made with the controller's lock held: an implementation queues the work for
  // its own threads and never calls back into the Controller from inside it.
  virtual void Launch(LaunchOrder order) = 0;  // all of the job's tasks, or none
  virtual void Terminate(JobId job, std::int32_t run, Seconds grace) = 0;
  virtual void Signal(JobId job, std::int32_t run, int signo) = 0;
  // The output of the job's run (`lockstep logs`): called WITHOUT the controller's lock, so it
  // may block on the backend's API.
  virtual Result<std::string> Logs(JobId job, std::int32_t run) = 0;
};

}  // namespace lockstep::controller
