// lockstep-agent: serves one or more nodes (virtual nodes for `lockstep up` and tests, or the
// host itself). It registers them with lockstepd, polls for commands (launch, signal,
// terminate), runs tasks through the Launcher, and reports their ends. Events that cannot be
// delivered are kept and resent, so a controller restart loses none. The output of steps that
// srun follows is read from pipes (OutputPump) and sent to lockstepd in batches, always before
// the step's end on this node.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "backend/agent/core_dump.h"
#include "backend/agent/health_monitor.h"
#include "backend/agent/job_hook.h"
#include "backend/agent/input_feeder.h"
#include "backend/agent/launcher.h"
#include "backend/agent/leftover_tasks.h"
#include "backend/agent/output_pump.h"
#include "backend/agent/pmi2_server.h"
#include "backend/agent/pmix_server.h"
#include "backend/agent/spool.h"
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
    std::string serial;
    // In MIG mode: its MIG devices in NVML's order ("MIG-..." and the profile, "1g.10gb"),
    // which lockstepd matches to the node's configured slices (CUDA_VISIBLE_DEVICES names them).
    struct Mig {
      std::string uuid;
      std::string profile;
    };
    std::vector<Mig> mig;
  };
  std::vector<Gpu> gpus;
  bool nvml = false;  // its GPUs are this host's, from NVML (health checks watch them)
};

struct AgentOptions {
  std::string name;                   // unique per agent; default: hostname and first node
  std::string socket_path;            // lockstepd's socket
  std::string spool_dir;              // scripts of running jobs (spool.h)
  std::string address = "127.0.0.1";  // where this host's tasks are reached (MASTER_ADDR)
  std::vector<AgentNode> nodes;
  std::string cgroup_root;  // Launcher option; empty: autodetect
  std::string tool_dir;     // put first in jobs' PATH: srun, sbatch, ... for scripts
  // When lockstepd has answered nothing for this long and registration fails again, Run gives
  // up and returns (gave_up() is then true): an agent whose lockstepd is gone for good (`lockstep
  // up` run again, the state directory removed) does not poll a dead socket forever. 0: never.
  std::chrono::seconds give_up_after{3600};
  // Health checks only (the DaemonSet on Kubernetes, docs/kubernetes.md): the agent registers
  // its nodes and reports their health, and refuses every launch.
  bool health_only = false;
  // Shared file systems only (the storage DaemonSet on Kubernetes, docs/storage.md): the agent
  // mounts what is declared for its nodes under `host_root`, checks and reports it, and refuses
  // every launch.
  bool mounts_only = false;
  std::string host_root;  // where this host's `/` is seen; "": `/` itself
  bool launches() const { return !health_only && !mounts_only; }
  // How often running tasks' usage is sampled and sent to lockstepd for sstat (Slurm's
  // JobAcctGatherFrequency); 0: never.
  std::chrono::seconds usage_interval{30};
  // The program whose `keep-core` mode keeps a crashed task's core, run as the job's user
  // (core_dump.h); empty: this process's own executable (lockstep-agent).
  std::string core_keeper;
};

class Agent {
 public:
  static Result<std::unique_ptr<Agent>> Create(const AgentOptions& options);
  ~Agent();
  // Runs until Stop(), or until lockstepd has been unreachable for give_up_after: register,
  // poll, launch, reap, report. Tasks that an earlier agent on the same spool left running were
  // ended by Create.
  void Run();
  // True when Run returned because lockstepd stayed unreachable.
  bool gave_up() const { return gave_up_; }
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
  // sbcast's "bcast" command (agent_bcast.cc): writes the piece as the job's user and reports
  // each of its nodes' outcome. Runs in a thread of its own.
  void Broadcast(const nlohmann::json& command);
  // Starts the unit's tasks (its spool script, pipes and cgroups) and reports it if none ran.
  // Runs in a launch thread of its own (Launch).
  void SpawnTasks(const std::shared_ptr<Unit>& unit, const nlohmann::json& command);
  // A batch unit whose node lacks a shared file system is not started: reported as a launch
  // that failed (lockstepd queues the job again) and forgotten. True when so.
  bool StorageMissing(const std::shared_ptr<Unit>& unit);
  // Whether a unit still starting should give up: it was terminated, or the agent stops.
  bool LaunchGivenUp(const Unit& unit);

  // --- Prolog and epilog (agent_job_hooks.cc, docs/health.md). ---
  struct HookKey {
    std::uint64_t job = 0;
    int run = 0;
    std::string node;
    auto operator<=>(const HookKey&) const = default;
  };
  enum class PrologState { kRunning, kPassed, kFailed };
  // In a thread of its own: the node's prolog for the run (once; later launches of the run
  // there wait for its outcome), then the unit's tasks, or none when it failed.
  void LaunchAfterProlog(std::shared_ptr<Unit> unit, nlohmann::json command);
  // "job_end": the run has ended; its epilog runs on the node once its processes there are gone.
  void JobEnd(const nlohmann::json& command);
  void MaybeRunEpilogLocked(const HookKey& key);  // requires mu_
  void StartHookThreadLocked(std::function<void()> body);  // requires mu_
  void ReportHookFailureLocked(const HookKey& key, const std::string& hook,
                               const JobHookRun& run, const std::string& detail);
  void JoinHookThreads(bool only_finished);
  // A task the launcher reaped: its unit's exit, core and end. Requires mu_.
  void TaskEndedLocked(pid_t pid, const TaskExit& exit);
  // Keeps the core of the unit's task `pid` in a thread of its own; the unit's end waits for it.
  void KeepCoreLocked(const std::shared_ptr<Unit>& u, pid_t pid, int signal);  // requires mu_
  // step_id < 0: every unit of the job; else only that step's.
  // Every task of the job, or one step's; `batch_only`: the batch script's shell alone.
  void SignalJob(std::uint64_t job, int signo, int step_id = -1, bool batch_only = false);
  // scontrol suspend/resume (agent_suspend.cc): every task of the run on this agent.
  void SuspendRun(std::uint64_t job, int run, bool stop);
  // sstat (agent_usage.cc): a "usage" event for every running task, when the interval is due.
  void SampleUsageIfDue();
  std::chrono::steady_clock::time_point next_usage_{};  // only the reaper thread uses it
  // run < 0: every run of the job on this agent.
  void TerminateJob(std::uint64_t job, int grace_s, int run = -1, int step_id = -1);
  void ReapLoop();
  void SendEvents();
  // Sends the first `count` output chunks of output_outbox_; false when lockstepd did not take
  // them all (the rest stays, in order).
  bool SendOutput(std::size_t count);
  void Report(nlohmann::json event);
  // The pump's callbacks.
  void TakeOutput(std::vector<OutputChunk> chunks);
  void OutputClosed(std::uint64_t task);
  // Reports the unit's end once its processes are gone and its output is all read. Requires mu_.
  void MaybeReportLocked(const std::shared_ptr<Unit>& u);
  // Whether a job's processes run on `node` now (the health program's node_states).
  bool NodeBusy(const std::string& node);

  // --- MPI steps (agent_mpi.cc, docs/mpi.md). ---
  // What a task of an MPI step gets: variables, and for PMI-2 its end of the server's socket.
  struct MpiTask {
    std::map<std::string, std::string> env;
    UniqueFd inherit;
  };
  // The PMIx server (--mpi=pmix) and the PMI-2 server (--mpi=pmi2), each started at the first
  // step that needs it; an error when it cannot start.
  Result<PmixServer*> MpiServer();
  Result<Pmi2Server*> Pmi2();
  // Registers an MPI step's tasks of this unit with its server: each rank's part.
  Result<std::map<int, MpiTask>> PrepareMpi(const Unit& unit, const nlohmann::json& c);
  // "gather_done": a fence's data for the PMIx server.
  void MpiGatherDone(const nlohmann::json& command);
  // Deregisters the MPI steps whose units ended (queued by MaybeReportLocked); not under mu_.
  void EndMpiUnits();

  AgentOptions options_;
  std::unique_ptr<Launcher> launcher_;
  std::unique_ptr<Spool> spool_;
  std::unique_ptr<TaskRecords> task_records_;
  client::ApiClient poll_client_;
  client::ApiClient event_client_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> gave_up_{false};
  std::atomic<std::uint64_t> launches_{0};
  const CorePattern core_pattern_ = CorePattern::OfHost();

  std::mutex mu_;
  std::map<pid_t, std::shared_ptr<Unit>> by_pid_;  // guarded by mu_
  std::vector<std::shared_ptr<Unit>> units_;       // guarded by mu_
  // Tasks reaped before their launch thread registered them in by_pid_; guarded by mu_.
  std::map<pid_t, TaskExit> early_exits_;
  // Runs suspended here (job, run): a task they start later (after a prolog) starts stopped.
  std::set<std::pair<std::uint64_t, int>> suspended_runs_;  // guarded by mu_
  std::vector<nlohmann::json> outbox_;             // guarded by mu_: events not yet delivered
  struct OutputTask {
    std::shared_ptr<Unit> unit;
    int rank = 0;
  };
  std::map<std::uint64_t, OutputTask> output_tasks_;  // guarded by mu_: by the pump's task id
  std::uint64_t next_output_task_ = 0;                // guarded by mu_
  // Output chunks not yet delivered, each {"job_id", "step_id", "node", "rank", "stream",
  // "data"} with its raw size; sent before outbox_ so a step's output precedes its end.
  std::deque<std::pair<nlohmann::json, std::size_t>> output_outbox_;  // guarded by mu_
  // Prolog and epilog bookkeeping, guarded by mu_.
  std::map<HookKey, std::pair<PrologState, std::string>> prologs_;
  std::condition_variable prolog_done_;  // with mu_: a prolog of prologs_ ended
  // job_end received, epilog (if any) not yet started: it waits for the run's units there.
  std::map<HookKey, std::optional<JobHookRun>> epilogs_due_;
  std::set<HookKey> ended_;           // runs whose job_end came (a repeat is ignored) ...
  std::deque<HookKey> ended_order_;   // ... the latest ones, oldest first
  struct HookThread {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<HookThread> hook_threads_;
  // Declared after what its callbacks use, so it stops before they go.
  std::unique_ptr<OutputPump> pump_;
  // Feeders of units that ended, stopping; destroyed (joined) once done, off mu_.
  std::vector<std::unique_ptr<InputFeeder>> retired_feeders_;  // guarded by mu_
  std::unique_ptr<HealthMonitor> health_;  // started by Run, configured by lockstepd
  // MPI steps: fence parts for lockstepd, queued by the PMIx server's thread (which may not
  // take mu_: a registration holding mu_ may wait for that thread), sent with the events.
  std::mutex mpi_mu_;
  std::vector<nlohmann::json> gather_outbox_;  // guarded by mpi_mu_
  // (job, step, node) of MPI units that ended, for EndMpiUnits; guarded by mu_.
  std::vector<std::tuple<std::uint64_t, std::int32_t, std::string>> mpi_ended_;
  std::mutex pmix_start_mu_;  // held while a server starts
  std::string pmix_error_;    // guarded by pmix_start_mu_: why it could not start
  // Declared after what their callbacks use, so they stop before those go.
  std::unique_ptr<PmixServer> pmix_;  // guarded by pmix_start_mu_
  std::unique_ptr<Pmi2Server> pmi2_;  // guarded by pmix_start_mu_
  std::thread reaper_;
  std::vector<std::thread> terminators_;  // guarded by mu_
};

// A task's standard input as the launch command says (agent_stdin.cc): srun's through a pipe or
// a pseudo-terminal, whose other end goes to the unit's InputFeeder, or a file.
struct TaskInput {
  UniqueFd task_end;  // the task's stdin (and, for a terminal, its stdout and stderr)
  UniqueFd feed_end;  // what the feeder writes into; empty when srun's input is not forwarded
  UniqueFd pty_output;  // a terminal's master for the output pump
};
Result<TaskInput> MakeTaskInput(const nlohmann::json& launch, const nlohmann::json& task,
                                bool stream);

// The host as one node: CPUs, memory, and GPUs from NVML when a driver is present.
AgentNode DetectHostNode(const std::string& name);

}  // namespace lockstep::agent
