// The controller's private records of nodes, agents and steps (internal to src/controller).
#pragma once

#include <deque>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
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
  std::string agent;        // the agent serving it; empty: never registered
  bool responding = false;  // its agent heartbeats
  std::string address;      // where its tasks can be reached (MASTER_ADDR)
  // Reported by a backend other than the agents (Kubernetes):
  bool cordoned = false;    // spec.unschedulable: DRAIN with reason "cordoned"
  std::string down_reason;  // why it is not responding (NotReady, a NoExecute taint, deleted)
};

struct Controller::AgentInfo {
  std::string name;
  std::vector<std::string> nodes;
  std::chrono::steady_clock::time_point last_seen;
  std::deque<nlohmann::json> commands;
};

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
};

// Slurm's TRES-style "72(x2),36" compression of per-node counts.
std::string CompressCounts(const std::vector<std::int32_t>& counts);

// Wall-clock seconds: the controller is the one place that reads the clock for the engine.
Time WallNow();

}  // namespace lockstep::controller
