// The messages between lockstepd and its agents (docs/api.md, "Agents"): commands built from
// the backend contract's orders, and the agents' bodies decoded into typed values, every field
// checked before anything is used (an error names the field).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend/agent/step_gather.h"
#include "backend/backend.h"
#include "common/status.h"

namespace lockstep::agent {

// A unit (batch step or step tasks on one node) an agent still runs when it registers.
struct RunningUnit {
  backend::RunId run;
  std::int32_t step_id = -1;  // -1: the batch step
  std::string node;
};

struct Registration {
  std::string agent;
  std::string address = "127.0.0.1";
  std::vector<std::string> nodes;
  std::vector<RunningUnit> running;
  // False for an agent that only checks (health-only or mounts-only, on Kubernetes): it is one
  // of the node's checkers, never where its tasks are sent, and its silence downs no node.
  bool launches = true;
  // The limits each node holds jobs to, as its launcher found its cgroups; a node not named
  // (an older agent) holds them all.
  struct Limits {
    bool memory = true;
    bool cpus = true;
  };
  std::map<std::string, Limits> limits;
  // Each node's GPUs as NVML sees them (an agent serving the host; none for virtual GPUs).
  std::map<std::string, std::vector<backend::GpuSeen>> gpus_seen;
};

struct AgentEvent {
  backend::RunId run;
  bool batch = true;
  std::int32_t step_id = -1;
  std::string node;
  backend::ExitStatus exit;
  // A batch step that was not started (its node lacks a shared file system): `exit.error` says
  // why, and the run goes back to the queue (EventSink::LaunchFailed) instead of ending.
  bool launch_failed = false;
  // A failed prolog or epilog ("hook_failed"): which, its program and what went wrong.
  std::string hook, hook_program, hook_detail;
  // A task's usage sample ("usage", for sstat); the other fields are then unused.
  std::optional<backend::TaskUsage> usage;
  // An agent's part of an MPI step's fence ("gather"); the other fields are then unused.
  std::optional<GatherPart> gather;
  // A node's outcome of an sbcast piece ("bcast_done"): its broadcast, with `node` and the
  // error in `exit.error` ("" when written); the other fields are then unused.
  std::uint64_t bcast_id = 0;
};

struct HealthReports {
  std::string agent;
  std::vector<backend::NodeHealthReport> reports;
};

Result<Registration> DecodeRegistration(const nlohmann::json& body);
Result<HealthReports> DecodeHealth(const nlohmann::json& body);
Result<std::vector<AgentEvent>> DecodeEvents(const nlohmann::json& body);
Result<std::vector<backend::OutputChunk>> DecodeOutput(const nlohmann::json& body);

// The agent's launch command for a batch step (on the allocation's first node).
nlohmann::json LaunchCommand(const backend::LaunchOrder& order);
// The agent's "bcast" command: the order's piece for `nodes` (those of the order this agent
// serves), under broadcast `id`.
nlohmann::json BroadcastCommand(std::uint64_t id, const backend::BroadcastOrder& order,
                                const std::vector<std::string>& nodes);
// The agent's launch command for a step's tasks on one node (with an MPI step's layout, which
// the backend adds: MpiLayoutJson).
nlohmann::json StepLaunchCommand(const backend::StepLaunch& step,
                                 const std::vector<backend::StepTask>& tasks);

}  // namespace lockstep::agent
