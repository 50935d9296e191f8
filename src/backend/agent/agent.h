// lockstep-agent: serves one or more nodes (virtual nodes for `lockstep up` and tests, or the
// host itself). It registers them with lockstepd, polls for commands (launch, signal,
// terminate), runs tasks through the Launcher, and reports their ends. Events that cannot be
// delivered are kept and resent, so a controller restart loses none.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backend/agent/launcher.h"
#include "client/api_client.h"
#include "common/status.h"

namespace lockstep::agent {

struct AgentNode {
  std::string name;
  int cpus = 1;
  std::int64_t mem_mb = 0;
  struct Gpu {
    int index = 0;
    std::string uuid;
    std::string type;
  };
  std::vector<Gpu> gpus;
};

struct AgentOptions {
  std::string name;                   // unique per agent; default: hostname and first node
  std::string socket_path;            // lockstepd's socket
  std::string spool_dir;              // scripts of running jobs
  std::string address = "127.0.0.1";  // where this host's tasks are reached (MASTER_ADDR)
  std::vector<AgentNode> nodes;
  std::string cgroup_root;  // Launcher option; empty: autodetect
  std::string tool_dir;     // put first in jobs' PATH: srun, sbatch, ... for scripts
};

class Agent {
 public:
  static Result<std::unique_ptr<Agent>> Create(const AgentOptions& options);
  ~Agent();
  // Runs until Stop(): register, poll, launch, reap, report.
  void Run();
  void Stop();
  // After Run has returned: ends every task still running (SIGTERM, SIGKILL after `grace`) and
  // cleans up after them. An agent does not adopt tasks when it starts again, so a stopped agent
  // leaves none behind; lockstepd requeues their jobs.
  void Shutdown(std::chrono::seconds grace);

 private:
  explicit Agent(const AgentOptions& options);
  struct Unit;  // the tasks of one job step on one node
  Status Register();
  void HandleCommand(const nlohmann::json& command);
  void Launch(const nlohmann::json& command);
  void SignalJob(std::uint64_t job, int signo);
  // run < 0: every run of the job on this agent.
  void TerminateJob(std::uint64_t job, int grace_s, int run = -1);
  void ReapLoop();
  void SendEvents();
  void Report(nlohmann::json event);

  AgentOptions options_;
  std::unique_ptr<Launcher> launcher_;
  client::ApiClient poll_client_;
  client::ApiClient event_client_;
  std::atomic<bool> stopping_{false};
  std::uint64_t launches_ = 0;  // only the command thread launches

  std::mutex mu_;
  std::map<pid_t, std::shared_ptr<Unit>> by_pid_;  // guarded by mu_
  std::vector<std::shared_ptr<Unit>> units_;       // guarded by mu_
  std::vector<nlohmann::json> outbox_;             // guarded by mu_: events not yet delivered
  std::thread reaper_;
  std::vector<std::thread> terminators_;  // guarded by mu_
};

// The host as one node: CPUs, memory, and GPUs from NVML when a driver is present.
AgentNode DetectHostNode(const std::string& name);

}  // namespace lockstep::agent
