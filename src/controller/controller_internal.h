// The controller's private records of nodes, steps and commands (internal to src/controller).
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "controller/controller.h"
#include "engine/model.h"

namespace lockstep::controller {

struct Controller::NodeInfo {
  // What the operator said (scontrol update State=): up, drain or down, with a reason.
  engine::NodeState admin = engine::NodeState::kUp;
  std::string reason;
  std::string reason_user;
  Time reason_time = 0;
  bool reported = false;    // a backend has reported it at least once
  bool responding = false;  // its backend says it is ready
  std::string address;      // where its tasks can be reached (MASTER_ADDR)
  bool cordoned = false;    // the backend's own drain (spec.unschedulable): reason "cordoned"
  // Which limits the node holds jobs to (NodeReport): shown, and warned of at submission.
  bool enforces_memory = true;
  bool enforces_cpus = true;
  std::string down_reason;  // why it is not responding (not responding, NotReady, deleted)
  // The drain is the health checker's own (reason "health: ..."): only such a drain is resumed
  // when the checks pass; an operator's never is.
  bool health_drain = false;
  bool health_event = false;  // that drain is for an event (an XID): no passing round ends it
};

// The store's key of a job's script and environment (table "scripts"): kept apart from the job
// records, since they are read once, at launch, and a million pending jobs must not hold them.
inline std::string ScriptKey(JobId id) { return std::to_string(id); }

// Slurm's ESLURM_NOT_WHOLE_HET_JOB: what only a heterogeneous job's leader may be asked.
inline constexpr char kNotOnHetComponent[] =
    "Operation not permitted on individual component of heterogeneous job";

// "memory,cpus", "memory", "cpus" or "none": the limits a node holds jobs to.
std::string LimitsEnforced(bool memory, bool cpus);

// Where an after:ID+MIN dependency on `e` counts from: its start, or its end when it never
// started (engine::FinishedJob::since).
Time DependencySince(const JobEntry& e);

// A partition's state as the API says it: "up", "down", "drain" or "inactive"
// (controller_partitions.cc).
const char* PartitionStateName(PartitionState s);

// A job step (srun): tasks spread over some of the job's nodes.
struct Controller::StepInfo {
  JobId job = 0;
  std::int32_t step = 0;
  std::string name;
  std::vector<std::string> nodes;
  std::set<std::string> nodes_running;  // not yet reported as exited
  std::int32_t ntasks = 0;
  std::string state = "RUNNING";  // RUNNING, COMPLETED, FAILED, CANCELLED
  std::int32_t exit_code = 0, signal = 0;
  Time start_time = 0, end_time = 0;
  // The host and pid of the srun that started it (scontrol show steps' SrunHost:Pid), as srun
  // told them: "" and 0 when it did not.
  std::string srun_host;
  std::int32_t srun_pid = 0;
};

// A command for the backend, decided under mu_ and carried out by the dispatcher.
struct Controller::Command {
  struct Launch {
    // Without the script, its arguments and the submitted environment, which the dispatcher
    // reads from the store (off the lock) and puts beneath the job's own variables.
    LaunchOrder order;
    JobId script_id = 0;  // the store's key of the script (an array's first task)
  };
  struct Terminate {
    backend::RunId run;
    Seconds grace = 0;
  };
  struct Signal {
    backend::RunId run;
    int signo = 0;
    bool batch_only = false;  // the batch script's shell alone (Backend::SignalBatch)
  };
  struct LaunchStep {
    backend::StepLaunch step;
  };
  struct SignalStep {
    JobId job = 0;
    std::int32_t step = 0;
    int signo = 0;
    Seconds grace = 0;
  };
  struct Suspend {
    backend::RunId run;
    bool stop = true;  // false: resume
  };
  std::variant<Launch, Terminate, Signal, LaunchStep, SignalStep, Suspend> what;
};

struct Controller::OutboxEntry {
  std::optional<store::PendingWrite> write;  // a write to wait for (and check)
  std::optional<Command> command;            // a command to send
};

// Slurm's TRES-style "72(x2),36" compression of per-node counts.
std::string CompressCounts(const std::vector<std::int32_t>& counts);

}  // namespace lockstep::controller
