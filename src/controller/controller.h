// lockstepd's core: the jobs and nodes it knows, the durable store behind them, the scheduling
// loop that calls the engine, and the agents that run the work. The HTTP layer (api_server.h)
// turns requests into calls here; everything here is thread-safe behind one mutex.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "controller/job_entry.h"
#include "controller/job_env.h"
#include "engine/model.h"
#include "spec/cluster_config.h"
#include "store/store.h"

namespace lockstep::controller {

struct ControllerOptions {
  std::string state_dir;       // the store lives here
  std::string cluster_config;  // cluster YAML (nodes, partitions, QoS, policy)
  Seconds node_timeout = 30;   // an agent silent this long makes its nodes DOWN (SlurmdTimeout)
  Seconds kill_wait = 30;      // SIGTERM to SIGKILL at a time limit or cancel (KillWait)
  std::vector<std::uint32_t> operators;          // uids allowed to act on every job; root always is
  std::chrono::milliseconds schedule_delay{20};  // gather submissions before a pass
  std::chrono::milliseconds periodic_pass{2000};  // backfill pass even without events
};

// Who is asking: from SO_PEERCRED on the Unix socket, or a token on TCP.
struct Caller {
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::string user;
};

class Controller {
 public:
  // Loads the cluster, opens the store, recovers every job, starts the scheduling thread.
  static Result<std::unique_ptr<Controller>> Start(const ControllerOptions& options);
  ~Controller();  // stops the scheduling thread; jobs keep running on their agents

  // --- Users' API. Results are the JSON objects of docs/api.md. ---
  // Durable when it returns; an array answers its first id.
  Result<JobId> Submit(const Caller& caller, spec::JobSpec spec);
  nlohmann::json ListJobs(const nlohmann::json& filter) const;
  Result<nlohmann::json> ShowJob(JobId id) const;
  // signal 0 cancels; another signal is delivered to the job's processes.
  Status Cancel(const Caller& caller, JobId id, int signal);
  Status Hold(const Caller& caller, JobId id);
  Status Release(const Caller& caller, JobId id);
  Status Requeue(const Caller& caller, JobId id);
  Status Update(const Caller& caller, JobId id, const nlohmann::json& changes);
  Result<nlohmann::json> Why(JobId id) const;
  nlohmann::json ListNodes() const;
  Status SetNodeState(const Caller& caller, const std::string& node, const std::string& state,
                      const std::string& reason);
  nlohmann::json ListPartitions() const;
  nlohmann::json Accounting(const nlohmann::json& filter) const;
  nlohmann::json Priorities() const;
  // Steps (srun inside an allocation).
  Result<nlohmann::json> CreateStep(const Caller& caller, JobId id, const nlohmann::json& request);
  Result<nlohmann::json> ShowStep(JobId id, std::int32_t step) const;

  // --- Agents' API. ---
  Status AgentRegister(const nlohmann::json& body);
  // Waits up to `wait` for commands; also the agent's heartbeat.
  nlohmann::json AgentPoll(const std::string& agent, std::chrono::milliseconds wait);
  Status AgentEvents(const nlohmann::json& body);

  bool IsOperator(std::uint32_t uid) const;

 private:
  struct NodeInfo;
  struct AgentInfo;
  struct StepInfo;
  explicit Controller(const ControllerOptions& options);

  Status Recover();
  void ScheduleLoop();
  void RequestPass();
  void RequestPassLocked();
  // With mu_ held:
  void RunPassLocked(Time now);
  engine::Snapshot BuildSnapshotLocked(Time now, std::vector<JobEntry*>* pending,
                                       std::vector<JobEntry*>* running);
  void StartJobLocked(JobEntry& job, const engine::Allocation& alloc, Time now);
  void EndJobLocked(JobEntry& job, int exit_code, int signal, bool oom, Time now);
  void RequeueLocked(JobEntry& job, const std::string& reason, Time now);
  void EnforceLimitsLocked(Time now);
  void CheckAgentsLocked(Time now);
  void SendLocked(const std::string& node, nlohmann::json command);
  void TerminateLocked(JobEntry& job);
  Status PersistLocked(const std::vector<const JobEntry*>& jobs);
  Status CheckOwner(const Caller& caller, const JobEntry& job) const;
  Result<JobEntry*> FindLocked(JobId id);
  nlohmann::json JobJsonLocked(const JobEntry& e) const;
  JobEnvInput EnvInputLocked(const JobEntry& job) const;
  nlohmann::json LaunchCommandLocked(const JobEntry& job, const std::string& script,
                                     const std::map<std::string, std::string>& env) const;
  std::uint32_t NodeIndexLocked(const std::string& name) const;

  ControllerOptions options_;
  spec::ClusterConfig cluster_;
  std::unique_ptr<store::Store> store_;

  mutable std::mutex mu_;
  std::condition_variable wake_scheduler_;
  std::condition_variable agent_commands_;
  bool stopping_ = false;
  bool pass_requested_ = false;
  std::map<JobId, JobEntry> jobs_;  // guarded by mu_
  std::vector<NodeInfo> nodes_;     // guarded by mu_, indexed like cluster_.base.nodes
  std::map<std::string, std::unique_ptr<AgentInfo>> agents_;                   // guarded by mu_
  std::map<std::pair<JobId, std::int32_t>, std::unique_ptr<StepInfo>> steps_;  // guarded by mu_
  std::unordered_map<JobId, engine::Pending> last_pending_;                    // from the last pass
  std::vector<std::pair<JobId, engine::PriorityBreakdown>> last_priorities_;
  std::thread scheduler_;
};

}  // namespace lockstep::controller
