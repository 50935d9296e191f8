// lockstepd's core: the jobs and nodes it knows, the durable store behind them, the scheduling
// loop that calls the engine, and the backend that runs the work (backend/backend.h).
//
// Thread-safety: every public method may be called from any thread. One mutex (mu_) guards the
// jobs and nodes, and it guards memory only: no store write is waited for, no backend is called
// and no network I/O is done while it is held. Under it a change is made in memory, its store
// records are queued (Store::PutAsync: memory only, committed in the order queued, so a later
// state is never overwritten by an earlier one) and its backend commands are put in the outbox.
// After it, a caller that must answer "durable" waits for its own write, and the dispatcher
// thread carries out the outbox in order, each command once the writes queued before it are
// durable. A write that fails stops lockstepd (crash-only; recovery reads the store again).
//
// Ownership: Start returns the only owner. The backend is attached after Start and detached
// before the controller is destroyed (DetachBackend waits for calls in flight).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
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

#include "backend/admission.h"
#include "backend/backend.h"
#include "common/caller.h"
#include "common/clock.h"
#include "common/status.h"
#include "common/write_fence.h"
#include "config/cluster_config.h"
#include "controller/accounts_admin.h"
#include "controller/event_log.h"
#include "controller/job_entry.h"
#include "controller/job_env.h"
#include "controller/job_tally.h"
#include "controller/lock_stats.h"
#include "controller/metrics_view.h"
#include "controller/pending_array.h"
#include "controller/sched_stats.h"
#include "controller/spec_interner.h"
#include "controller/step_input.h"
#include "controller/step_output.h"
#include "engine/model.h"
#include "jobspec/validate.h"
#include "reservation/reservation.h"
#include "store/store.h"

namespace lockstep::engine {
class Scheduler;
}  // namespace lockstep::engine

namespace lockstep::policy {
class PolicyGate;
struct Request;
}  // namespace lockstep::policy

namespace lockstep::controller {

struct HealthBook;  // health_book.h
struct PendingJobChanges;  // job_changes.h

// Slurm's partition State (controller_partitions.cc): UP runs its jobs; DRAIN runs the queued
// ones and takes no new one; DOWN takes new ones and starts none; INACTIVE neither.
enum class PartitionState : std::uint8_t { kUp, kDown, kDrain, kInactive };

struct ControllerOptions {
  std::string state_dir;       // the store lives here
  std::string cluster_config;  // cluster YAML (nodes, partitions, QoS, policy)
  std::string backend;         // not empty: replaces the YAML's `backend:` (lockstepd --backend)
  Seconds kill_wait = 30;      // SIGTERM to SIGKILL at a time limit or cancel (KillWait)
  std::vector<std::uint32_t> operators;          // uids allowed to act on every job; root always is
  std::chrono::milliseconds schedule_delay{20};  // gather submissions before a pass
  std::chrono::milliseconds periodic_pass{2000};  // backfill pass even without events
  // Compare the scheduler's incremental snapshot with one built from every job before each
  // pass, and stop on a difference (tests; $LOCKSTEP_CHECK_SNAPSHOT=1 for lockstepd).
  bool check_snapshot = false;
  // Where time comes from; tests pass a ManualClock. Not owned; outlives the controller.
  Clock* clock = &SystemClock();
  // Called when a store write fails: memory and disk would differ from then on. The default
  // logs and aborts (crash-only: lockstepd recovers from the store when started again).
  std::function<void(const Status&)> on_store_failure;
  // Events kept for `lockstep events` (the oldest go first beyond it): about 200 bytes each,
  // an hour of a cluster that ends three jobs a second.
  std::size_t event_log_capacity = 10'000;
  // Not empty: replaces the YAML's store_mode (lockstepd --store-mode; store/store_mode.h).
  std::string store_mode;
  // The store commits only while this is open (the leader's lease, common/write_fence.h); null:
  // always. Not owned; outlives the controller.
  const WriteFence* write_fence = nullptr;
};

using lockstep::Caller;
using backend::LaunchOrder;
using backend::NodeReport;

class Controller : private backend::EventSink,
                   private backend::Admission,
                   private backend::StepInputSource {
 public:
  // Loads the cluster, opens the store, recovers every job, starts the controller's threads.
  static Result<std::unique_ptr<Controller>> Start(const ControllerOptions& options);
  ~Controller() override;  // stops the threads; jobs keep running on their nodes

  // --- Users' API. Results are the JSON objects of docs/api.md. ---
  // Durable when it returns; an array answers its first id.
  Result<JobId> Submit(const Caller& caller, jobspec::JobSpec spec);
  // Lists and accounting read the jobs kJobsPerHold at a time under the lock (never all of
  // them at once), so that squeue over a large queue does not stall the controller.
  static constexpr std::size_t kJobsPerHold = 256;
  // Receives the jobs of a listing one at a time, in id order.
  using JobSink = std::function<void(nlohmann::json)>;
  nlohmann::json ListJobs(const nlohmann::json& filter) const;
  // ListJobs' answer as the API sends it, each job serialized as it is made.
  std::string ListJobsText(const nlohmann::json& filter) const;
  // A job in memory (squeue's and scontrol's view): NotFound once it ended more than MinJobAge
  // ago and was purged, as slurmctld forgets it.
  Result<nlohmann::json> ShowJob(JobId id) const;
  // ShowJob's view of any job ever submitted: a purged job's from its stored record (the web
  // view's job page, `lockstep why`, `lockstep logs`; controller_history.cc).
  Result<nlohmann::json> JobRecord(JobId id) const;
  // signal 0 cancels; another signal is delivered to the job's processes.
  // scancel: `signal` 0 cancels; another is sent to what `target` names (Slurm's default: the
  // steps, not the batch script; --batch: its shell alone; --full: everything).
  enum class SignalTarget { kSteps, kBatch, kFull };
  Status Cancel(const Caller& caller, JobId id, int signal, SignalTarget target = SignalTarget::kFull);
  // `user_hold`: a hold the owner may release even when an operator puts it (scontrol uhold).
  Status Hold(const Caller& caller, JobId id, bool user_hold = false);
  Status Release(const Caller& caller, JobId id);
  Status Requeue(const Caller& caller, JobId id);
  // scontrol requeuehold (controller_jobs.cc): requeued and held (the user's hold, reason "job
  // requeued in held state" as Slurm 22.05's) in one change under the lock and one durable
  // write, so no pass can start it in between; `special_exit` (State=SpecialExit): shown as
  // SPECIAL_EXIT until released.
  Status RequeueHold(const Caller& caller, JobId id, bool special_exit = false);
  // scontrol update (controller_update.cc): `id` as the user named it, so an array's id changes
  // every task of the array not finished, its tasks not split off included; UpdateTask changes
  // the one task ("40_7"). Checked for every task first, then one durable write.
  Status Update(const Caller& caller, JobId id, const nlohmann::json& changes);
  Status UpdateTask(const Caller& caller, JobId id, const nlohmann::json& changes);
  // "cancel", "hold" or "release" of an array's tasks not split off yet (the record squeue
  // shows as 40_[5-3999999], "array_rest" in docs/api.md); hold and release also act on the
  // tasks split off for the scheduler that are still pending (controller_arrays.cc).
  Status ArrayRestAction(const Caller& caller, JobId array, const std::string& action);
  // The job id of task `task` of the array `array` ("40_7"), split off or not.
  Result<JobId> ArrayTaskJobId(JobId array, std::uint64_t task) const;
  Result<nlohmann::json> Why(JobId id) const;  // a purged job: its stored record
  nlohmann::json ListNodes() const;
  Status SetNodeState(const Caller& caller, const std::string& node, const std::string& state,
                      const std::string& reason);
  nlohmann::json ListPartitions() const;
  // scontrol update PartitionName= (controller_partitions.cc), operators only: {"state": "up"|
  // "down"|"drain"|"inactive", "max_time": seconds or null, "default": true}; durable when it
  // returns, replayed over the cluster YAML at start; scheduling follows at the next pass.
  Status UpdatePartition(const Caller& caller, const std::string& name, const nlohmann::json& body);
  nlohmann::json Accounting(const nlohmann::json& filter) const;
  std::string AccountingText(const nlohmann::json& filter) const;
  // sacct's filter, as AccountingTo reads it (controller_history.cc).
  struct AccountingQuery;
  nlohmann::json Priorities() const;
  // sacctmgr (controller_accounts.cc): the accounts, users, associations and QoS; and a change
  // by an operator ({"commit": false} only reports what it would do), durable when it returns
  // and applied to scheduling at the next pass. Its report lines, in sacctmgr's words.
  nlohmann::json AccountsTables() const;
  // sbatch/srun --test-only (controller_what_if.cc): `{"job_id", "partition", "start" (0: not
  // known), "nodes", "cpus", "reason"}` for `spec` as if submitted now; nothing is queued.
  Result<nlohmann::json> TestOnly(const Caller& caller, jobspec::JobSpec spec);
  // scontrol write batch_script (controller_accounts.cc): the job's script, for its owner and
  // operators.
  Result<std::string> BatchScript(const Caller& caller, JobId id) const;
  // scontrol show config (controller_config_view.cc): settings by Slurm's names, as text.
  nlohmann::json ConfigView() const;
  // scontrol show topology (controller_topology_view.cc): {"plugin", "switches": [{"name",
  // "level", "link_speed", "nodes", "switches"}], "blocks": [{"name", "index", "nodes",
  // "block_size"}]}, as Slurm's topology records.
  nlohmann::json TopologyView() const;
  Result<nlohmann::json> ChangeAccounts(const Caller& caller, const nlohmann::json& request);
  // Reservations (controller_reservations.cc, docs/reservations.md): scontrol show reservation
  // and sinfo -T read them; operators create, update and delete them with scontrol's words,
  // {"action": "create"|"update"|"delete", "words": ["StartTime=now", ...]}.
  nlohmann::json ReservationsView() const;
  Result<nlohmann::json> ChangeReservations(const Caller& caller, const nlohmann::json& request);
  // The QoS and the fair-share tree as sshare shows it (controller_shares.cc).
  nlohmann::json ListQos() const;
  nlohmann::json Shares() const;
  // The shared file systems (the cluster YAML's `storage:`; docs/storage.md) as `lockstep
  // storage` lists them; lockstepd replaces the list when the file changes (controller_storage.cc).
  nlohmann::json StorageView() const;
  void SetStorage(std::vector<config::FileSystem> storage);
  // The admission policy (controller_policy.cc, docs/policy.md): every submission and every
  // change of a job's spec is judged by it before anything changes. Null: none. Not owned; set
  // before requests come and outlives them.
  void SetPolicy(policy::PolicyGate* gate) { policy_.store(gate); }
  // What the policy would decide of `spec` submitted by `as` (`lockstep policy test`): the
  // decision as JSON (docs/api.md). Users may ask for themselves, operators for anyone.
  Result<nlohmann::json> TestJobPolicy(const Caller& caller, const std::string& as,
                                       jobspec::JobSpec spec);
  // What a submission should be told, though accepted: on a backend that runs jobs in images,
  // a directory on no declared file system (the job starts in its image's directory); nodes of
  // its partitions that cannot hold it to its memory or CPUs (controller_limits.cc).
  std::vector<std::string> SubmitWarnings(const jobspec::JobSpec& spec) const;
  // Steps (srun inside an allocation).
  Result<nlohmann::json> CreateStep(const Caller& caller, JobId id, const nlohmann::json& request);
  Result<nlohmann::json> ShowStep(JobId id, std::int32_t step) const;
  // The step's output from `offset` (docs/api.md, step output), through `done`: at once when
  // there are bytes past `offset`, the step has ended, `wait` is 0 or the request is refused;
  // else as soon as output comes or the step ends, or with no new output when `wait` (real
  // time) ends. Never blocks: `done` is kept as the step's waiter, and called once, from any
  // thread, without the controller's lock.
  using StepOutputDone = std::function<void(Result<nlohmann::json>)>;
  // `attach` (sattach): a second reader, whose reading the end never frees the buffer (srun's
  // read does, or the 60 s after the step's end).
  // `notice`: the first scontrol notify message srun has not printed (the answer's "notices"
  // and "notice", docs/api.md); a new one answers a waiting read at once.
  void StepOutput(const Caller& caller, JobId id, std::int32_t step, std::uint64_t offset,
                  std::chrono::milliseconds wait, StepOutputDone done, bool attach = false,
                  std::uint64_t notice = 0);
  // scontrol notify (controller_notify.cc): `message` for every srun that follows a running
  // step of the job, each printing "srun: MESSAGE"; Slurm's "Requested operation is presently
  // disabled" when the job does not run or has no such srun. An event "notified".
  Status Notify(const Caller& caller, JobId id, const std::string& message);
  // srun's input for a step that reads it (controller_step_input.cc, step_input.h): srun's
  // write, checked against the step's owner; an agent's read for the tasks on `node`.
  void StepInput(const Caller& caller, JobId id, std::int32_t step, const nlohmann::json& body,
                 std::chrono::milliseconds wait, StepOutputDone done);
  void AgentStepInput(JobId id, std::int32_t step, const std::string& node, std::uint64_t offset,
                      std::uint64_t winsize_seen, std::chrono::milliseconds wait,
                      StepOutputDone done);
  // signal 0: SIGTERM to the step's tasks, SIGKILL after KillWait; else that signal.
  Status SignalStep(const Caller& caller, JobId id, std::int32_t step, int signal);
  // scontrol suspend / resume (controller_suspend.cc): operators only; the run's tasks stop
  // where they run and its allocation stays; the time suspended is added to its limit.
  Status Suspend(const Caller& caller, JobId id);
  Status Resume(const Caller& caller, JobId id);
  // sstat (controller_usage.cc): the latest usage sample of every task of the job's running
  // steps, for its owner and operators; docs/api.md "Usage".
  Result<nlohmann::json> Usage(const Caller& caller, JobId id) const;
  // The output of the job's current (or last) run, `lockstep logs`, from the backend.
  Result<std::string> JobLogs(const Caller& caller, JobId id);
  // sbcast (controller_bcast.cc; docs/api.md, "Broadcast"): one piece of a file written on
  // every node of the running job (or of its step "step_id") as the job's user; each node's
  // outcome, {"nodes": [{"node", "error"}]}, "" when written. Blocks up to the piece's timeout.
  Result<nlohmann::json> Broadcast(const Caller& caller, JobId id, const nlohmann::json& body);

  bool IsOperator(std::uint32_t uid) const;

  // Fleet health (controller_health.cc, docs/health.md): GPUs and nodes by infrastructure
  // failures within `window` seconds (0: all), with their history. `lockstep health`.
  nlohmann::json Health(Seconds window) const;
  // An operator clears a bad actor (a GPU by serial or UUID) or a node's event drain (by name):
  // its exclusion ends and a node the checker drained for it alone resumes.
  Status ClearHealth(const Caller& caller, const std::string& what);

  // --- Backends (backend/backend.h, backend/admission.h). ---
  // Where a backend reports; valid for the controller's lifetime.
  backend::EventSink& events() { return *this; }
  // Where a backend queues work others created (pod groups).
  backend::Admission& admission() { return *this; }
  // From now on jobs run through `backend` (not owned; it must outlive its attachment).
  void AttachBackend(backend::Backend* backend);
  // Detaches the backend, waiting for calls to it in flight (the dispatcher's, Logs).
  void DetachBackend();

  // The durable store, for state kept beside the controller's (bearer tokens, tokens.h).
  store::Store& store() { return *store_; }

  // What lockstepd says of itself (GET /api/v1/diag): the controller lock's hold times.
  nlohmann::json Diagnostics() const;

  // --- Observability (controller_observe.cc, docs/observability.md). ---
  // What a metrics scrape shows: job counts kept as jobs change (JobTally), nodes and
  // partitions copied under the lock; rendering is the caller's, off the lock.
  MetricsView Metrics() const;
  // The scheduler's and the API's counters (sdiag).
  SchedStats& stats() { return stats_; }
  const SchedStats& stats() const { return stats_; }
  // Job and node changes (`lockstep events`).
  EventLog& event_log() { return event_log_; }
  // Whether `caller` may see the details of the job `event` names (its own, or an operator).
  bool MaySeeDetails(const Caller& caller, const nlohmann::json& event) const;

  // --- For tests: barriers instead of sleeps. ---
  // Waits until every event queued so far is applied and every command decided so far is sent.
  void SettleForTest();
  // Runs a scheduling pass now (with the events queued before it applied) and waits for it.
  void PassForTest();
  // The jobs the engine holds, pending and running (controller_arrays.cc).
  std::pair<std::size_t, std::size_t> SchedulerJobsForTest() const;
  // Called between two batches of a listing (VisitJobsInBatches), with the lock free. Set it
  // before any listing runs.
  void SetBetweenListBatchesForTest(std::function<void()> f) {
    between_list_batches_for_test_ = std::move(f);
  }

 private:
  struct NodeInfo;
  struct StepInfo;
  struct Command;
  explicit Controller(const ControllerOptions& options);

  // backend::EventSink: each queues a closure that the events thread applies under mu_.
  void NodesReported(std::vector<NodeReport> nodes, bool complete) override;
  void RunsAlive(std::vector<std::string> nodes, std::vector<backend::RunId> alive) override;
  void RunExited(backend::RunId run, backend::ExitStatus status) override;
  void LaunchFailed(backend::RunId run, std::string why) override;
  void StepNodeExited(JobId job, std::int32_t step, std::string node,
                      backend::ExitStatus status) override;
  void StepOutput(std::vector<backend::OutputChunk> chunks) override;
  void NodeHealth(backend::NodeHealthReport report) override;
  void JobHookFailed(backend::JobHookFailure failure) override;  // controller_job_hooks.cc
  // backend::StepInputSource (controller_step_input.cc): srun's input for a backend's own tasks.
  Result<backend::StepInputRead> ReadStepInput(JobId job, std::int32_t step,
                                               const std::string& reader, std::uint64_t offset,
                                               std::uint64_t winsize_seen,
                                               std::chrono::milliseconds wait) override;
  void StepUsage(std::vector<backend::TaskUsage> samples) override;  // controller_usage.cc
  // backend::Admission.
  Result<JobId> Admit(jobspec::JobSpec spec, const std::string& ns) override;
  Status Withdraw(JobId job) override;
  std::vector<backend::ExternalJob> ExternalJobs(const std::set<JobId>* only) const override;
  Status SetPlacementFeatures(
      const std::map<std::string, std::set<std::string>>& features) override;
  std::size_t KnownNodes() const override;

  Status Recover();
  // One stored job: loaded unless it finished more than min_job_age ago (purged).
  Status RecoverJobLocked(const store::Record& r);
  // The final states of purged jobs that recovered pending jobs wait for, from the store.
  Status RecoverPurgedTargetsLocked();
  Result<JobId> SubmitAs(const Caller& owner, jobspec::JobSpec spec);
  // ---- Heterogeneous jobs (controller_het.cc) ----
  // `leader` with its het_components: one job per component, consecutive ids, one commit.
  Result<JobId> SubmitHetAs(const Caller& owner, jobspec::JobSpec leader);
  // Every component of `any`'s heterogeneous job that is in memory, leader first.
  std::vector<JobEntry*> HetComponentsLocked(const JobEntry& any);
  // What an operation on `e` acts on: a heterogeneous job's every component for its leader
  // (scontrol suspend, resume), else `e` alone.
  std::vector<JobEntry*> WholeJobLocked(JobEntry& e);
  // The leader has ended: its other components end as it did.
  void EndHetComponentsLocked(const JobEntry& leader, Time now);
  // What a step of `job` on its components `groups` (srun --het-group; empty: the first, or
  // the whole job when it is not heterogeneous) runs on, as its tasks' environment sees it.
  Result<JobEnvInput> StepAllocationLocked(const JobEntry& job, const std::vector<int>& groups);
  // Dependency targets not in memory, as the store has them (read before the submission's lock).
  struct StoredTargets {
    std::unordered_map<JobId, JobState> ended;  // by job id: finished targets
    std::unordered_set<JobId> unfinished;        // stored, but not finished when read
    // "after:40_7": (array, task) -> the task's job id and state
    std::map<std::pair<JobId, std::uint32_t>, std::pair<JobId, JobState>> tasks;
  };
  // Dependencies on array tasks ("after:40_2") become those tasks' job ids (controller_jobs.cc).
  // A target purged from memory is taken from `stored` (ReadStoredTargets).
  Status ResolveDependenciesLocked(jobspec::JobSpec& spec, const StoredTargets& stored);
  // Everything a submission passes under the lock (controller_jobs.cc); `count` jobs of it.
  // `runs_script`: false for a heterogeneous job's later components, which have none.
  Status AdmitSpecLocked(const Caller& caller, jobspec::JobSpec& spec,
                         const StoredTargets& stored, std::uint64_t count,
                         bool runs_script = true);
  // scancel of a heterogeneous job's component: the leader cancels them all; another, only
  // once running (Slurm's rule).
  store::PendingWrite CancelHetLocked(JobEntry& e);

  // --- Events (controller_events.cc). ---
  void QueueEvent(std::function<void(Time)> apply);
  void EventLoop();
  void NodesReportedLocked(const std::vector<NodeReport>& nodes, bool complete, Time now);
  void RunsAliveLocked(const std::vector<std::string>& nodes,
                       const std::vector<backend::RunId>& alive, Time now);
  void RunExitedLocked(backend::RunId run, backend::ExitStatus status, Time now);
  void LaunchFailedLocked(backend::RunId run, const std::string& why, bool may_requeue, Time now);
  void StepNodeExitedLocked(JobId job, std::int32_t step, const std::string& node,
                            backend::ExitStatus status, Time now);

  // --- Health (controller_health.cc). ---
  void NodeHealthLocked(const backend::NodeHealthReport& report, Time now);
  // The nodes of the job's partitions that cannot hold it to what it asks (controller_limits.cc).
  std::vector<std::string> LimitWarningsLocked(const jobspec::JobSpec& spec) const;
  // The node's GPUs by serial (their records follow them to this host); a bad actor among
  // them drains it.
  void NoteGpusLocked(const backend::NodeHealthReport& report, std::uint32_t node, Time now);
  // Drains the node for the checker, unless someone else drained (or downed) it already.
  // `event`: for an event (an XID), which no later round can clear: it stays until an operator
  // resumes or clears the node.
  void HealthDrainLocked(std::uint32_t node, const std::string& reason, Time now, bool event);
  // Resumes the node if the checker drained it and nothing keeps it drained any more.
  void MaybeHealthResumeLocked(std::uint32_t node, Time now);
  // A critical finding on `gpu` of the node (-1: the node): recorded against the GPU and host;
  // the jobs on that GPU end with cause `gpu`, requeued at once when they may be.
  void RecordFailureLocked(const backend::NodeHealthReport& report, std::int32_t gpu,
                           const std::string& what, Time now);
  // Whether a GPU now in the node is over the bad-actor threshold.
  bool HasExcludedGpuLocked(const std::string& node) const;
  void PersistHealthLocked(const std::string& table, const std::string& key,
                           const nlohmann::json& record);
  Status LoadHealthLocked();
  void ClearNodeEventDrainLocked(const std::string& node);
  // A prolog or epilog failed (controller_job_hooks.cc): the node is drained and, after a
  // prolog, the run requeued elsewhere with cause `node`.
  void JobHookFailedLocked(const backend::JobHookFailure& failure, Time now);
  // scheduler.kill_invalid_depend: cancels a pending job whose dependency can never be
  // satisfied, with cause `scheduler` (controller_scheduler_cause.cc).
  void KillInvalidDependLocked(JobEntry& job);
  // Records why the job's current run did not complete (cause and evidence).
  static void SetFailure(JobEntry& job, std::string cause, std::string detail);

  // --- Effects after the lock (controller_outbox.cc). ---
  // Queues the jobs' records (memory only) and returns the write to wait on for "durable".
  store::PendingWrite PersistLocked(const std::vector<const JobEntry*>& jobs);
  store::PendingWrite PersistNodeLocked(std::uint32_t node);
  // Queues a command for the dispatcher, to be sent once the writes queued before it are
  // durable.
  void SendLocked(Command command);
  // Waits for a write that the caller's answer depends on; a failure stops lockstepd.
  Status Durable(store::PendingWrite write);
  void DispatchLoop();
  void Dispatch(Command& command);
  void StoreFailed(const Status& status);
  Result<std::string> BackendLogs(const backend::LogsRequest& request);
  Result<std::vector<backend::BroadcastResult>> BackendBroadcast(
      const backend::BroadcastOrder& order);

  // --- The scheduling pass (controller.cc). ---
  void ScheduleLoop();
  void RequestPassLocked();
  // The scheduling thread's pass: ReplayChangesLocked brings sched_ up to date under the lock,
  // the engine plans without it (submissions go on meanwhile), ApplyPlanLocked acts on the plan
  // where the jobs and nodes it names have not changed since.
  bool ReplayChangesLocked(Time now);
  // Plans (without mu_), applies the plan and publishes what it says of the pending jobs.
  // False when lockstepd is stopping.
  bool PassLocked(std::unique_lock<std::mutex>& lock, std::optional<HeldSpan>& held, Time now,
                  engine::PlanDetail detail);
  void ApplyPlanLocked(engine::Plan& plan, Time now);
  // Counts a pass for sdiag and /metrics/scheduler (the scheduling thread, without mu_).
  void RecordPassStats(const engine::Plan& plan, engine::PlanDetail detail,
                       std::chrono::steady_clock::duration took, Time now);
  // What a pass says of the pending jobs (reason, expected start, priority), as changes to
  // what the passes before said: computed off mu_ by the scheduling thread, so that only what
  // changed is written back under it (controller_apply.cc).
  struct PendingView {
    engine::PendingReason reason = engine::PendingReason::kNone;
    Time expected_start = 0;
    std::uint32_t priority = 0;
    bool changed = false;  // since the last ChangedPendingViews
  };
  struct PendingViews {
    bool full = false;  // from a PlanDetail::kFull plan: every pending job has its view
    std::vector<std::pair<JobId, PendingView>> changed;
    std::unordered_map<JobId, engine::Pending> detailed;  // reserved or blocked by others
  };
  PendingViews ChangedPendingViews(engine::Plan& plan, engine::PlanDetail detail);
  void PublishPendingViewsLocked(PendingViews views,
                                 std::vector<std::pair<JobId, engine::PriorityBreakdown>> prios);
  // Records that `job` changed, for the next pass's replay.
  void TouchLocked(const JobEntry& job);
  // --- Finished jobs leave memory after MinJobAge (controller_purge.cc); the store keeps them
  // for sacct, dependencies, `lockstep why` and the web view (controller_history.cc). ---
  // Files `job` for the purge once finished, and as a dependent while it pends with dependencies.
  void NoteForPurgeLocked(const JobEntry& job);
  // Each turn of the scheduling loop: forgets the jobs finished more than min_job_age ago whose
  // final records are durable (every outbox entry queued before they were chosen carried out).
  void PurgeFinishedJobsLocked(Time now);
  void ForgetJobLocked(JobId id, const std::unordered_set<JobId>& awaited);
  // The jobs that pending jobs' dependencies name (arrays' tasks not split off included).
  std::unordered_set<JobId> AwaitedTargetsLocked() const;
  // How a dependency's target ended: from memory, or kept when it was purged; nullopt while it
  // has not ended (or is unknown).
  std::optional<JobState> EndedTargetLocked(JobId id) const;
  // guarded by mu_: finished jobs by end time (a job may appear twice; the purge checks).
  std::deque<std::pair<Time, JobId>> finished_order_;
  // guarded by mu_: chosen for the purge, forgotten once outbox_done_ reaches purge_after_.
  std::vector<JobId> purging_;
  std::uint64_t purge_after_ = 0;
  std::unordered_set<JobId> dependents_;  // guarded by mu_: pending jobs with dependencies
  // guarded by mu_: purged jobs that a pending job's dependency names, with their final state.
  std::unordered_map<JobId, JobState> purged_targets_;
  // A job as stored (its spec filled in), read without the lock; nullopt when never stored.
  Result<std::optional<JobEntry>> StoredJob(JobId id) const;
  Result<StoredTargets> ReadStoredTargets(const jobspec::JobSpec& spec) const;
  // A dependency's target as `stored` saw it, or read again now when it ended and was purged
  // after that read (rare: MinJobAge passed in between).
  std::optional<JobState> StoredTargetStateLocked(JobId id, const StoredTargets& stored) const;
  // sacct (controller_history.cc): the jobs in memory merged in id order with the store's, page
  // by page, the store's filtered as they are read.
  static AccountingQuery AccountingQueryOf(const nlohmann::json& filter);
  void AccountingJobsTo(const AccountingQuery& q, const JobSink& emit) const;
  void AccountingByIdsTo(const AccountingQuery& q, const JobSink& emit) const;
  // Emits, in id order, the jobs in memory with ids in [from, upper) that pass `q` and the
  // `stored` ones memory does not hold. False, having emitted nothing, when a stored job is
  // neither in memory nor finished: it was purged after the page was read.
  bool EmitAccountingPage(const AccountingQuery& q, JobId from, JobId upper,
                          const std::vector<JobEntry>& stored, const JobSink& emit) const;
  // Events of the stream (controller_observe.cc): a job's change of `kind` ("submitted",
  // "started", "ended", "requeued", ...), a node's ("node_drained", ...), each with the time.
  // `array_tasks`: a "submitted" event's count of the array's tasks (0: not an array).
  void JobEventLocked(const char* kind, const JobEntry& job, std::size_t array_tasks = 0);
  void NodeEventLocked(const char* kind, std::uint32_t node, const std::string& reason);
  // Counts an ended job for sdiag and emits its "ended" event.
  void JobEndedLocked(const JobEntry& job);
  std::string PartitionOfLocked(const JobEntry& job) const;
  // The nodes, partitions and job counts of a scrape, copied under mu_.
  void CopyMetricsViewLocked(MetricsView& v) const;
  // Where the job tally reads jobs, their partitions and node indexes (controller_observe.cc).
  JobTally::Lookup TallyLookupLocked() const;
  engine::Job RunningEngineJobLocked(const JobEntry& job);
  // Tells `sched` of `job` as its state says: pending (with the ended targets of its
  // dependencies), running with its allocation, or finished.
  void PlaceJobLocked(const JobEntry& job, engine::Scheduler& sched);
  // A node as the scheduler sees it: down when not responding, drained when cordoned.
  engine::NodeState SchedulingStateLocked(std::uint32_t node) const;
  // A new scheduler from the cluster, every job to be replayed into it.
  void NewSchedulerLocked();
  // A snapshot from every job: the self-check's reference.
  engine::Snapshot BuildSnapshotLocked(Time now);
  // The self-check of the scheduler against plan() ($LOCKSTEP_CHECK_SNAPSHOT).
  void CheckSchedulerJobsLocked(Time now);
  void CheckSchedulerPlan(const engine::Plan& got, engine::PlanDetail detail);
  void EnforceLimitsLocked(Time now);
  // --signal: the warning to running jobs whose limit is that near (controller_warn_signal.cc).
  void SendWarningSignalsLocked(Time now);

  // --- A job's life (controller_run.cc). ---
  void StartJobLocked(JobEntry& job, const engine::Allocation& alloc, Time now);
  // Sends the job's batch launch to the backend.
  void LaunchLocked(const JobEntry& job);
  // Ends a run: the state follows from how it ended, unless `cause` names it (NODE_FAIL). One
  // record, with the final state.
  void EndJobLocked(JobEntry& job, backend::ExitStatus status, Time now,
                    std::optional<JobState> cause = std::nullopt);
  store::PendingWrite RequeueLocked(JobEntry& job, const std::string& reason, Time now);
  // scontrol update (controller_update.cc): the changes asked, checked; the array's id or one job.
  struct JobChanges;
  static Result<JobChanges> DecodeChanges(const nlohmann::json& body, bool op);
  Status UpdateJobs(const Caller& caller, JobId id, const nlohmann::json& body, bool whole_array);
  // What an update of `id` changes: the job (or task), or every task of the array `id` not
  // finished and its tasks not split off (`rest`, null when none).
  struct UpdateTargets {
    std::vector<JobEntry*> jobs;
    PendingArray* rest = nullptr;
  };
  Result<UpdateTargets> UpdateTargetsLocked(JobId id, bool whole_array);
  bool IsArrayIdLocked(JobId id) const;
  // `e`'s spec with the changes made, or why `caller` (an operator or not) may not make them;
  // `label` names the job in errors.
  Result<jobspec::JobSpec> ChangedSpecLocked(const JobEntry& e, const JobChanges& c, bool op,
                                             const std::string& label,
                                             const StoredTargets& stored);
  // The fields only a pending job may change, and an array's throttle, made in `spec`
  // (controller_update_pending.cc); "Job is no longer pending execution" for a job that is not.
  Status ApplyPendingChangesLocked(const JobEntry& e, const PendingJobChanges& c,
                                   const StoredTargets& stored, const std::string& label,
                                   jobspec::JobSpec& spec);
  // A changed spec checked as a submission's: ranges, names, fit, the partition's state.
  Status CheckChangedPlacementLocked(const jobspec::JobSpec& spec);
  // Requeue and RequeueHold (controller_jobs.cc).
  Status RequeueJob(const Caller& caller, JobId id, bool hold, bool special_exit);
  // RequeueLocked's change in memory, without its write or pass (for requeuehold's one write).
  void RequeueRunLocked(JobEntry& job, const std::string& reason, Time now);
  void RequeueOwnRunLocked(JobEntry& job, const std::string& reason, Time now);
  // The run on a lost node: requeued, or ended NODE_FAIL when it may not be.
  void RunLostLocked(JobEntry& job, const std::string& reason, Time now);
  void TerminateLocked(JobEntry& job);
  // controller_suspend.cc: a suspended run goes on (RUNNING, its tasks continued); the time
  // suspended is counted (EndSuspensionLocked) and the scheduler told of its later end.
  void ResumeRunLocked(JobEntry& job, Time now);
  static void EndSuspensionLocked(JobEntry& job, Time now);
  // Cancels a pending job at once, or asks a running one to end (CANCELLED when it has).
  store::PendingWrite CancelLocked(JobEntry& job);
  // A node stopped responding: its jobs are requeued, or end NODE_FAIL.
  void NodeLostLocked(std::uint32_t node, Time now);
  LaunchOrder LaunchOrderLocked(const JobEntry& job) const;

  Status CheckOwner(const Caller& caller, const JobEntry& job) const;
  Result<JobEntry*> FindLocked(JobId id);
  nlohmann::json JobJsonLocked(const JobEntry& e) const;
  // `lockstep why` of a job in memory: its priority factors, reservation and the jobs ahead.
  nlohmann::json WhyLocked(const JobEntry& job) const;
  // Calls visit(id, job) for every job in id order with the lock held, but releases it and
  // takes it again after every kJobsPerHold jobs: a listing of 100,000 jobs (squeue, sacct)
  // holds the controller for one batch at a time, not the whole second it takes. A job added
  // or removed meanwhile is listed as it is when its batch comes; none is listed twice.
  void VisitJobsInBatches(const std::function<void(JobId, const JobEntry&)>& visit) const;
  void ListJobsTo(const nlohmann::json& filter, const JobSink& emit) const;
  void AccountingTo(const nlohmann::json& filter, const JobSink& emit) const;
  JobEnvInput EnvInputLocked(const JobEntry& job) const;
  std::uint32_t NodeIndexLocked(const std::string& name) const;
  std::string OutputPathLocked(const JobEntry& job, std::int32_t run) const;
  std::uint64_t PlacementFeatureMaskLocked(const std::string& node) const;
  void FreeStepOutputsLocked(Time now);
  // Step output (controller_steps.cc): what a read from `offset` answers (the buffer goes once
  // srun has read the end of an ended step), and whether it would answer now.
  nlohmann::json ReadStepOutputLocked(StepOutputs::Key key, std::uint64_t offset, bool attach,
                                      std::uint64_t notice);
  bool StepOutputReadyLocked(StepOutputs::Key key, std::uint64_t offset, std::uint64_t notice);
  // The timer of the step output waiters: answers those whose step has output past their
  // offset or has ended, and those whose wait ended, each after releasing mu_. Woken by
  // step_output_changed_.
  void StepWaitLoop();

  ControllerOptions options_;
  Clock& clock_;
  config::ClusterConfig cluster_;  // guarded by mu_: with the nodes backends reported
  std::unique_ptr<store::Store> store_;

  mutable std::mutex mu_;
  mutable LockHoldStats lock_stats_;  // how long mu_ is held, each time
  // "datasets/imagenet=/mnt/datasets/imagenet(nfs,ro),..." or "(null)" (scontrol show config).
  std::string StorageSummaryLocked() const;  // requires mu_
  // --container-mounts: each source on a declared file system its partitions get, on a backend
  // that runs jobs in images (controller_storage.cc). Requires mu_.
  Status CheckContainerMountsLocked(const jobspec::JobSpec& spec) const;
  // The job's --container-mounts for its launch, read-only where the storage is. Requires mu_.
  std::vector<backend::BindMount> BindMountsLocked(const jobspec::JobSpec& spec) const;
  // mu_ taken for a scope, its hold time recorded.
  struct HeldLock {
    explicit HeldLock(const Controller& c) : guard(c.mu_), span(c.lock_stats_) {}
    std::lock_guard<std::mutex> guard;
    HeldSpan span;
  };
  std::condition_variable wake_scheduler_;
  bool stopping_ = false;          // guarded by mu_
  bool pass_requested_ = false;    // guarded by mu_
  bool full_pass_requested_ = false;  // guarded by mu_: the next pass is a full one
  Time last_full_pass_ = 0;           // the scheduling thread's
  std::uint64_t pass_requests_ = 0;    // guarded by mu_: passes ever requested
  std::uint64_t passes_covering_ = 0;  // guarded by mu_: requests the last finished pass served
  std::condition_variable pass_done_;
  std::function<void()> between_list_batches_for_test_;  // set before use, by tests only
  std::map<JobId, JobEntry> jobs_;   // guarded by mu_
  JobId next_job_id_ = 1;            // guarded by mu_; job ids are given out in memory and
                                     // made durable by the job records that use them
  std::unordered_set<JobId> dirty_;  // guarded by mu_: changed since the last replay
  std::set<JobId> active_;           // guarded by mu_: RUNNING and COMPLETING jobs
  // The engine's state between passes: jobs are replayed into it under mu_ (ReplayChangesLocked)
  // and it plans without mu_, on the scheduling thread only.
  std::unique_ptr<engine::Scheduler> sched_;
  std::optional<engine::Snapshot> check_reference_;  // the self-check's, from replay to plan
  // The scheduling thread's: what was last published of each pending job. A replayed job's
  // entry is dropped, so that the next pass publishes it whatever it says.
  std::unordered_map<JobId, PendingView> shown_;
  SpecInterner specs_;                          // guarded by mu_
  // guarded by mu_: each array's spec as stored once (table "array_specs"); its tasks' records
  // name it while they ask what it asked.
  std::unordered_map<JobId, std::shared_ptr<const jobspec::JobSpec>> array_specs_;
  // The JSON of `e`'s record: its spec spliced in, or a reference to its array's.
  std::string RecordOfLocked(const JobEntry& e);
  // --- Arrays (controller_arrays.cc): tasks split off their array's one record. ---
  // guarded by mu_: by array id, the arrays with tasks not split off (table "pending_arrays"),
  // and those whose rest was cancelled before it started (kept for sacct).
  std::map<JobId, PendingArray> pending_arrays_;
  std::map<JobId, PendingArray> cancelled_arrays_;
  // The array that holds the unsplit task `id`, or null.
  PendingArray* PendingArrayOfLocked(JobId id);
  const PendingArray* PendingArrayOfLocked(JobId id) const;
  store::Record PendingArrayRecordLocked(const PendingArray& a);
  // Splits task `id` off `a` into jobs_ (touched), its record added to `records`.
  JobEntry& SplitOffLocked(PendingArray& a, JobId id, std::vector<store::Record>& records);
  // Splits task `id` off `a` and queues its record with the array's, in one write. `a` is
  // gone when that was its last task.
  JobEntry& SplitTaskLocked(PendingArray& a, JobId id);
  // Before each replay: each array offers the scheduler a window of split-off pending tasks.
  void SplitArrayWindowsLocked();
  // --- Dependencies the spec alone cannot resolve (controller_depend.cc). ---
  // The job id of task `index` of `array` (split off or not); `array` itself when it is not an
  // array; nullopt when there is no such task (or it is long gone).
  std::optional<JobId> CorrespondingTaskLocked(JobId array, std::uint32_t index) const;
  // A dependent task being split off: each aftercorr dependency becomes an afterok on the
  // target's task (split off too, its records and its array's added to `records`), in a spec
  // of the dependent's own.
  void ResolveCorrespondingLocked(JobEntry& dependent, std::vector<store::Record>& records);
  store::PendingWrite QueueWriteLocked(std::vector<store::Record> records);
  store::PendingWrite HoldArrayRestLocked(const Caller& caller, PendingArray& a, bool hold);
  // squeue's and sacct's record of the unsplit tasks: one job, "array_task_str" "5-3999999".
  nlohmann::json PendingArrayJsonLocked(const PendingArray& a) const;
  // guarded by mu_: the engine's pending and running jobs after the last replay (for tests).
  std::pair<std::size_t, std::size_t> replayed_jobs_;
  Status RecoverPendingArraysLocked(const std::vector<store::Record>& records);
  bool cluster_changed_ = false;  // guarded by mu_: nodes added or resized since the last replay
  // sacctmgr's changes (controller_accounts.cc): what the engine does not keep, and whether QoS,
  // accounts or associations changed since the last replay (the scheduler is then rebuilt).
  AccountsExtras accounts_extras_;    // guarded by mu_
  bool limits_changed_ = false;       // guarded by mu_
  std::uint64_t accounts_changes_ = 0;  // guarded by mu_: changes stored (their keys)
  Status ReplayAccountsChanges();       // at Start: the stored changes over the cluster YAML
  // Operators' partition changes (controller_partitions.cc): what each stored record says, by
  // partition name (table "partitions").
  std::map<std::string, nlohmann::json> partition_overrides_;  // guarded by mu_
  std::vector<PartitionState> partition_states_;  // guarded by mu_: by index; absent: UP
  PartitionState PartitionStateLocked(std::uint32_t partition) const;
  void SetPartitionStateLocked(std::uint32_t partition, PartitionState s);
  // A pending job as the engine is given it: held while its partition is DOWN or INACTIVE.
  engine::Job PendingEngineJobLocked(const JobEntry& e);
  // "PartitionDown" or "PartitionInactive" for a pending job the engine holds for its
  // partition (none of its own holds), else null.
  const char* ClosedPartitionReasonLocked(const JobEntry& e) const;
  // Before a partition's MaxTime changes: its running jobs that named no limit keep the one
  // they started with (Slurm sets a job's limit at submission), their records added.
  void FreezeRunningLimitsLocked(std::uint32_t partition, std::vector<store::Record>& records);
  Status ReplayPartitionChanges();  // at Start, after sacctmgr's
  // "Required partition not available (inactive or drain)" for a job `spec` would put in a
  // DRAIN or INACTIVE partition.
  Status CheckPartitionOpenLocked(const jobspec::JobSpec& spec) const;
  // Reservations (controller_reservations.cc), stored one record each (table "reservations").
  reservation::ReservationBook reservations_;  // guarded by mu_
  bool windows_changed_ = true;                // guarded by mu_: the engine's windows are stale
  // guarded by mu_: the PURGE_COMP reservations that had jobs at the last Advance.
  std::set<std::string> reservations_with_jobs_;
  Status LoadReservations();  // at Start
  reservation::ClusterFacts ReservationFactsLocked() const;
  // Gives the scheduler the windows and the jobs their window ids when reservations changed.
  void SyncWindowsLocked(Time now);
  // Each turn of the loop: repeats DAILY/WEEKLY ones, ends and purges the others, durably.
  void AdvanceReservationsLocked(Time now);
  // --reservation at submission: the name must exist and admit the caller and account.
  Status CheckReservationAccessLocked(const Caller& caller, const jobspec::JobSpec& spec) const;
  // What squeue says of a pending job that a reservation keeps waiting, or "" when none does.
  std::string ReservationReasonLocked(const JobEntry& e, Time expected_start) const;
  store::PendingWrite StoreReservationsLocked(const std::vector<std::string>& names);
  // Fair-share usage (controller_fairshare_usage.cc): charged by running jobs, decayed, and stored.
  Time usage_time_ = 0;  // guarded by mu_: when usage was last charged; 0 before the first pass
  Seconds UsagePeriodLocked() const;
  void AccrueUsageLocked(Time now);
  // Charges the part of `job`'s run since the last interval (at each interval, and when the
  // run ends or is requeued).
  void ChargeRunLocked(const JobEntry& job, Time now);
  void SaveUsageLocked();
  Status RecoverUsage();  // at Start, before jobs are recovered
  ActiveUse ActiveUseLocked() const;
  // sacctmgr's MaxSubmitJobs limits, and the cluster's max_submit_jobs, for `count` more jobs
  // of `caller` asking `spec`.
  Status CheckSubmitLimitsLocked(const Caller& caller, const jobspec::JobSpec& spec,
                                 std::uint64_t count) const;
  // What a user may submit (controller_submit_limits.cc, docs/security.md): the sizes Validate
  // checks for `caller`, the account `spec` charges, and room for one more job (MaxJobCount).
  jobspec::Limits ValidationLimits(const Caller& caller) const;
  Status CheckAccountLocked(const Caller& caller, const jobspec::JobSpec& spec) const;
  Status CheckJobCountLocked() const;
  // The policy's view of `spec` submitted (or changed) by `user`: the default account, the
  // default partition and its default time limit filled in as the scheduler will.
  policy::Request JobPolicyRequestLocked(const Caller& owner, const jobspec::JobSpec& spec,
                                         const char* operation) const;
  // Judges a submission; the decision is in the audit log before it returns. Takes mu_ briefly.
  Status CheckJobPolicy(const Caller& caller, const jobspec::JobSpec& spec);
  std::atomic<policy::PolicyGate*> policy_{nullptr};
  // The cluster file's submit limits, copied at Start and never changed: read without mu_.
  config::SubmitLimits submit_limits_;
  std::vector<NodeInfo> nodes_;   // guarded by mu_, indexed like cluster_.base.nodes
  std::unique_ptr<HealthBook> health_;  // guarded by mu_: health_book.h
  // guarded by mu_: what operators said of nodes not known yet (recovered from the store
  // before their backend reported them), by name.
  std::map<std::string, NodeInfo> operator_states_;
  // guarded by mu_: SetPlacementFeatures, feature -> node names, and the bits of each node's
  // (by name, for the reports to keep them).
  std::map<std::string, std::set<std::string>> placement_features_;
  std::unordered_map<std::string, std::uint64_t> placement_masks_;
  std::map<std::pair<JobId, std::int32_t>, std::unique_ptr<StepInfo>> steps_;  // guarded by mu_
  // sstat: the latest sample of each task of running steps, by (job, step; -1 the batch step)
  // and (node, rank); a run's samples go when it ends (ForgetUsageLocked). Guarded by mu_.
  std::map<std::pair<JobId, std::int32_t>,
           std::map<std::pair<std::string, std::int32_t>, backend::TaskUsage>>
      usage_;
  void ForgetUsageLocked(JobId job);
  // From the last pass: the pending jobs that hold a reservation or wait for named jobs.
  std::unordered_map<JobId, engine::Pending> last_pending_;  // guarded by mu_
  std::vector<std::pair<JobId, engine::PriorityBreakdown>> last_priorities_;  // guarded by mu_
  // Step output: buffers of streamed steps, and srun's long polls waiting on them.
  StepOutputs step_outputs_;  // guarded by mu_
  struct StepWaiter {
    std::uint64_t offset = 0;
    std::chrono::steady_clock::time_point deadline;
    StepOutputDone done;
    bool attach = false;  // sattach's read: it never frees the buffer
    std::uint64_t notice = 0;  // the first scontrol notify message not yet read
  };
  std::map<StepOutputs::Key, std::vector<StepWaiter>> step_waiters_;  // guarded by mu_
  // Output appended, a step ended, a waiter added, or stopping: wakes StepWaitLoop.
  std::condition_variable step_output_changed_;
  // srun's input on its way to steps' tasks: its own lock (taken after mu_) and timer thread.
  StepInputs step_inputs_;

  // The outbox (controller_outbox.cc): guarded by mu_, carried out by the dispatcher thread.
  struct OutboxEntry;
  std::deque<OutboxEntry> outbox_;
  std::uint64_t outbox_queued_ = 0;  // guarded by mu_: entries ever queued
  std::uint64_t outbox_done_ = 0;    // guarded by mu_: entries carried out
  std::condition_variable outbox_changed_;

  // Events from backends: their own queue and lock, so a backend never waits for mu_.
  std::mutex events_mu_;
  std::condition_variable events_changed_;
  std::deque<std::function<void(Time)>> events_;  // guarded by events_mu_
  std::uint64_t events_queued_ = 0;               // guarded by events_mu_
  std::uint64_t events_applied_ = 0;              // guarded by events_mu_
  bool events_stopping_ = false;                  // guarded by events_mu_

  // The backend: calls to it are counted so that DetachBackend can wait for them.
  mutable std::mutex backend_mu_;
  std::condition_variable backend_idle_;
  backend::Backend* backend_ = nullptr;  // guarded by backend_mu_
  int backend_calls_ = 0;                // guarded by backend_mu_
  bool supports_steps_ = false;          // guarded by mu_ (copied at attach)
  bool supports_mpi_ = false;            // guarded by mu_ (copied at attach): srun --mpi
  bool supports_suspend_ = false;        // guarded by mu_ (copied at attach)
  bool jobs_in_images_ = false;          // guarded by mu_ (copied at attach)
  // Runs a call on the attached backend; Unavailable when none is attached.
  template <typename F>
  auto WithBackend(F&& f) -> decltype(f(std::declval<backend::Backend&>()));

  // Observability: jobs counted as they change (guarded by mu_; a scrape refreshes it), the
  // scheduler's counters and the event stream (each with its own lock, taken after mu_).
  mutable JobTally tally_;
  SchedStats stats_;
  EventLog event_log_;

  std::thread scheduler_;
  std::thread events_thread_;
  std::thread dispatcher_;
  std::thread step_waits_;
};

}  // namespace lockstep::controller
