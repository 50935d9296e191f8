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
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/status.h"
#include "controller/backend.h"
#include "controller/incremental_snapshot.h"
#include "controller/job_entry.h"
#include "controller/job_env.h"
#include "controller/spec_interner.h"
#include "controller/step_output.h"
#include "engine/model.h"
#include "config/cluster_config.h"
#include "store/store.h"

namespace lockstep::controller {

struct ControllerOptions {
  std::string state_dir;       // the store lives here
  std::string cluster_config;  // cluster YAML (nodes, partitions, QoS, policy)
  std::string backend;         // not empty: replaces the YAML's `backend:` (lockstepd --backend)
  Seconds node_timeout = 30;   // an agent silent this long makes its nodes DOWN (SlurmdTimeout)
  Seconds kill_wait = 30;      // SIGTERM to SIGKILL at a time limit or cancel (KillWait)
  std::vector<std::uint32_t> operators;          // uids allowed to act on every job; root always is
  std::chrono::milliseconds schedule_delay{20};  // gather submissions before a pass
  std::chrono::milliseconds periodic_pass{2000};  // backfill pass even without events
  // Compare the scheduler's incremental snapshot with one built from every job before each
  // pass, and stop on a difference (tests; $LOCKSTEP_CHECK_SNAPSHOT=1 for lockstepd).
  bool check_snapshot = false;
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
  Result<JobId> Submit(const Caller& caller, jobspec::JobSpec spec);
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
  // The step's output from `offset`, waiting up to `wait` for some (docs/api.md, step output).
  Result<nlohmann::json> StepOutput(const Caller& caller, JobId id, std::int32_t step,
                                    std::uint64_t offset, std::chrono::milliseconds wait);
  // signal 0: SIGTERM to the step's tasks, SIGKILL after KillWait; else that signal.
  Status SignalStep(const Caller& caller, JobId id, std::int32_t step, int signal);

  // --- Agents' API. ---
  Status AgentRegister(const nlohmann::json& body);
  // Waits up to `wait` for commands; also the agent's heartbeat.
  nlohmann::json AgentPoll(const std::string& agent, std::chrono::milliseconds wait);
  Status AgentEvents(const nlohmann::json& body);
  Status AgentOutput(const nlohmann::json& body);

  bool IsOperator(std::uint32_t uid) const;

  // --- Another backend than the agents (backend.h). ---
  // From now on jobs launch through `backend` (not owned; it must outlive the controller's use
  // of it: detach with nullptr before destroying it).
  void AttachBackend(Backend* backend);
  // Every node the backend knows, as it is now: new ones join the cluster, known ones take the
  // reported resources and state, and nodes it no longer reports go DOWN ("node deleted").
  void BackendNodes(const std::vector<NodeReport>& nodes);
  // Node features a backend gives for placement constraints it evaluates itself (the Kubernetes
  // pod-group scheduler: pods' node selectors, affinities and tolerations), beside the features
  // the nodes' reports carry: each feature of `features` is on exactly the nodes named (a node
  // not reported yet gets it when it is). Replaces what an earlier call gave: features left out
  // are dropped and their bits reused. Pending jobs see the change at the next pass; a job whose
  // constraint names a feature that no longer exists waits (BadConstraints). FailedPrecondition,
  // and nothing changed, when a node would need more than 64 features, or when a name is one of
  // the nodes' own features.
  Status BackendPlacementFeatures(const std::map<std::string, std::set<std::string>>& features);
  // The end of a job's run (of its batch step, or of every pod of it).
  void BackendTaskExited(JobId job, std::int32_t run, int exit_code, int signal, bool oom);
  // A launch that could not be made whole: its job goes back to the queue (or fails when it may
  // not be requeued), with `why` in the log.
  void BackendLaunchFailed(JobId job, std::int32_t run, const std::string& why);
  // The output of the job's current (or last) run, `lockstep logs`: from the backend (pods'
  // logs), or with the agents the job's output file when it is on this host.
  Result<std::string> JobLogs(const Caller& caller, JobId id);
  // The durable store, for state kept beside the controller's (bearer tokens, tokens.h).
  store::Store& store() { return *store_; }

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
  // The scheduling thread's pass: ReplayChangesLocked brings sched_ up to date under the lock,
  // the engine plans without it (submissions go on meanwhile), ApplyPlanLocked acts on the plan
  // where the jobs and nodes it names have not changed since.
  bool ReplayChangesLocked(Time now);
  void ApplyPlanLocked(engine::Plan& plan, Time now);
  // Records that `job` changed, for the next pass's replay.
  void TouchLocked(const JobEntry& job);
  engine::Job RunningEngineJobLocked(const JobEntry& job);
  // Puts `job` in the pending, running or finished list of `snapshot`, as its state says.
  void PlaceJobLocked(const JobEntry& job, IncrementalSnapshot& snapshot);
  // A snapshot from every job: the self-check's reference.
  engine::Snapshot BuildSnapshotLocked();
  void StartJobLocked(JobEntry& job, const engine::Allocation& alloc, Time now);
  void EndJobLocked(JobEntry& job, int exit_code, int signal, bool oom, Time now);
  void RequeueLocked(JobEntry& job, const std::string& reason, Time now);
  void EnforceLimitsLocked(Time now);
  void CheckAgentsLocked(Time now);
  // A node stopped responding: its jobs are requeued, or end NODE_FAIL.
  void NodeLostLocked(std::uint32_t node, Time now);
  LaunchOrder LaunchOrderLocked(const JobEntry& job, std::string script,
                                std::map<std::string, std::string> env,
                                std::vector<std::string> args) const;
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
  config::ClusterConfig cluster_;
  std::unique_ptr<store::Store> store_;

  mutable std::mutex mu_;
  std::condition_variable wake_scheduler_;
  std::condition_variable agent_commands_;
  bool stopping_ = false;
  bool pass_requested_ = false;
  std::map<JobId, JobEntry> jobs_;   // guarded by mu_
  JobId next_job_id_ = 1;            // guarded by mu_; job ids are given out in memory and
                                     // made durable by the job records that use them
  std::unordered_set<JobId> dirty_;  // guarded by mu_: changed since the last replay
  std::set<JobId> active_;           // guarded by mu_: RUNNING and COMPLETING jobs
  std::unique_ptr<IncrementalSnapshot> sched_;  // the scheduling thread's alone
  SpecInterner specs_;
  Backend* backend_ = nullptr;    // guarded by mu_; null: lockstep's agents
  bool cluster_changed_ = false;  // guarded by mu_: nodes added or resized since the last replay
  std::vector<NodeInfo> nodes_;   // guarded by mu_, indexed like cluster_.base.nodes
  // guarded by mu_: BackendPlacementFeatures, feature -> node names, and the bits of each
  // node's (by name, for the reports to keep them).
  std::map<std::string, std::set<std::string>> placement_features_;
  std::unordered_map<std::string, std::uint64_t> placement_masks_;
  std::uint64_t PlacementFeatureMaskLocked(const std::string& node) const;
  std::map<std::string, std::unique_ptr<AgentInfo>> agents_;                   // guarded by mu_
  std::map<std::pair<JobId, std::int32_t>, std::unique_ptr<StepInfo>> steps_;  // guarded by mu_
  // From the last pass: the pending jobs that hold a reservation or wait for named jobs.
  std::unordered_map<JobId, engine::Pending> last_pending_;
  std::vector<std::pair<JobId, engine::PriorityBreakdown>> last_priorities_;
  std::thread scheduler_;
  // Step output (controller_steps.cc): buffers of streamed steps, and srun's long polls.
  StepOutputs step_outputs_;  // guarded by mu_
  std::condition_variable step_output_arrived_;
  void FreeStepOutputsLocked(Time now);
};

}  // namespace lockstep::controller
