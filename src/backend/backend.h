// The contract between lockstepd's controller and where jobs run (DESIGN.md, "The backend
// contract"): commands go down through `Backend`, events come up through the `EventSink` the
// backend was given at construction. Implementations: lockstep's agents (backend/agent/
// agent_backend.h) and Kubernetes (backend/kubernetes/backend/). The simulator drives the
// engine directly (src/sim) and is not a backend.
//
// Depends only on common: a backend never includes the controller, and the controller knows
// backends only through this header.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backend/health.h"
#include "common/status.h"
#include "common/types.h"

namespace lockstep::backend {

// One run of a job: its restart count tells an earlier run of a requeued job from this one, so
// the end of an old run never ends the new.
struct RunId {
  JobId job = 0;
  std::int32_t run = 0;
  auto operator<=>(const RunId&) const = default;
};

// One node's share of a running job, by node name so that it survives a restart.
struct PlacedNode {
  std::string node;
  std::int32_t cpus = 0;
  std::int64_t mem_mb = 0;
  std::uint64_t gpus = 0;  // device bits of that node
};

// A host directory bound into a job's containers (sbatch --container-mounts), its source on a
// declared file system (checked at submission).
struct BindMount {
  std::string source;  // on the host
  std::string target;  // in the container
  bool read_only = false;
};

// Everything needed to start a job's batch step on its allocation.
struct LaunchOrder {
  JobId job = 0;
  std::int32_t run = 0;  // the job's restart count
  RunId id() const { return {job, run}; }
  std::string name;
  std::string user;
  std::uint32_t uid = 0, gid = 0;
  std::string partition;
  std::string work_dir;
  std::string script;  // the batch script's text
  std::vector<std::string> script_args;
  std::map<std::string, std::string> env;  // the batch environment, for rank 0
  std::vector<PlacedNode> nodes;           // the allocation, first node first
  std::vector<std::int32_t> tasks_per_node;
  std::string container_image;  // sbatch --container-image; empty: the backend's default
  std::vector<BindMount> container_mounts;  // only where RunsJobsInImages()
  std::string stdout_path, stderr_path;  // absolute; agents open them as the job's user
  bool append_output = false;            // a requeued run appends to its earlier output
  Seconds time_limit = 0;                // 0: none
  // Set when the job stands for pods that others created (a pod group): the backend binds
  // them to the allocation's nodes instead of creating anything.
  std::string external;
};

// One task of a job step (srun inside an allocation).
struct StepTask {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::int32_t rank = 0;
  std::string stdout_path, stderr_path;  // empty when the step streams its output
  // Standard input: srun's, relayed through lockstepd (the agent reads it for this task), or
  // this file (opened as the user); neither: /dev/null.
  bool stdin_forwarded = false;
  std::string stdin_path;
};

// srun's input to a step as lockstepd relays it (docs/api.md, "Step input"): what a backend that
// feeds its tasks itself (Kubernetes, through the pods' exec) reads, as agents read it over the
// API. `next_offset` is the offset to ask next; `winsize` the version of the terminal's size.
struct StepInputRead {
  std::string data;
  std::uint64_t next_offset = 0;
  bool eof = false;     // srun's input ended
  bool closed = false;  // the step ended: no more will come
  int rows = 0, cols = 0;
  std::uint64_t winsize = 0;
};
class StepInputSource {
 public:
  virtual ~StepInputSource() = default;
  // Blocks up to `wait` for bytes from `offset` (which also says `reader` took those before),
  // the input's end, the step's end, or a size newer than `winsize_seen`.
  virtual Result<StepInputRead> ReadStepInput(JobId job, std::int32_t step,
                                              const std::string& reader, std::uint64_t offset,
                                              std::uint64_t winsize_seen,
                                              std::chrono::milliseconds wait) = 0;
};

struct StepLaunch {
  JobId job = 0;
  std::int32_t run = 0;  // the job's run: ending the run ends its steps
  std::int32_t step = 0;
  std::uint32_t uid = 0, gid = 0;
  std::string user;
  std::string cwd;
  bool stream_output = false;  // tasks' output comes back through EventSink::StepOutput
  // srun --pty: the task of rank 0 runs on a pseudo-terminal of this first size (its input,
  // output and controlling terminal), fed with srun's input.
  bool pty = false;
  int rows = 0, cols = 0;
  // srun --mpi (docs/mpi.md): "pmix" or "pmi2" (a PMIx server on each node serves the tasks),
  // or "" for none. Only where SupportsMpi().
  std::string mpi;
  std::map<std::string, std::vector<StepTask>> tasks_by_node;
  // Where the tasks' forwarded input is read by a backend that feeds them itself (each node
  // reads as its name); set by the controller, which outlives the step. Agents ignore it.
  StepInputSource* input = nullptr;
};

// What a node offers, when the backend (not the cluster's configuration) knows it.
struct NodeResources {
  std::int32_t cpus = 0;
  std::int64_t mem_mb = 0;
  std::vector<std::string> gpus;  // one GPU type name per device, in device order
  std::vector<std::string> features;
  std::vector<std::string> switches;  // topology path from the top switch to the leaf
  std::string block;
  // Taken by work lockstep did not place (pods of other schedulers).
  std::int32_t used_cpus = 0;
  std::int64_t used_mem_mb = 0;
  std::int32_t used_gpus = 0;
};

// A node as the backend sees it, by name: the controller maps names to its indexes.
// A GPU as its host sees it (NVML): its index and UUID, and in MIG mode its MIG devices (UUID
// and profile, "1g.10gb") in NVML's order.
struct GpuSeen {
  std::int32_t index = 0;
  std::string uuid;
  struct Mig {
    std::string uuid;
    std::string profile;
  };
  std::vector<Mig> mig;
};

struct NodeReport {
  std::string name;
  std::optional<NodeResources> resources;  // nullopt: as the cluster's configuration says
  std::string address;                     // where its tasks can be reached (MASTER_ADDR)
  bool ready = true;                       // false: DOWN, with down_reason
  std::string down_reason;
  bool cordoned = false;  // DRAIN with reason "cordoned", until uncordoned
  // Whether the node holds a job to its memory and to the CPUs it was given: false where the host
  // has no cgroup controller for it (docs/agent-processes.md). A kubelet holds pods to theirs.
  bool enforces_memory = true;
  bool enforces_cpus = true;
  // Its GPUs as the host sees them, when its agent has NVML; empty: not known. The configured
  // devices take their UUIDs from it (a MIG slice's is what CUDA_VISIBLE_DEVICES names).
  std::vector<GpuSeen> gpus_seen;
};

struct ExitStatus {
  int exit_code = 0;
  int signal = 0;
  bool oom = false;
  // When a core-dumping signal ended it: where its core is ("/path (N bytes)"), or why none is
  // kept (core_pattern pipes cores to a handler, the core limit is 0, ...). Evidence only.
  std::string core_dump{};  // (an initializer: {code, signal, oom} stays complete)
  // Why a task could not start, for the job's failure (the output file could not be opened as
  // the user, say); empty when every task started.
  std::string error{};
};

// A job's Prolog or Epilog failed on a node (docs/health.md): the node is drained, and after a
// prolog the job's run is requeued elsewhere.
struct JobHookFailure {
  RunId run;
  std::string node;
  std::string hook;     // "prolog" or "epilog"
  std::string program;  // its path
  std::string detail;   // "exit 1", "timed out after 5 s", ... (the agent's words)
};

// Output of a streamed step's task.
struct OutputChunk {
  JobId job = 0;
  std::int32_t step = 0;
  std::int32_t rank = 0;
  bool is_stderr = false;
  std::string data;
};

// What one task of a running step used so far (sstat), as its node sampled it: from the task's
// cgroup where it has one (cpu.stat, memory.current/peak, io.stat), else from /proc.
struct TaskUsage {
  RunId run;
  std::int32_t step = -1;  // -1: the batch step
  std::string node;
  std::int32_t rank = 0;
  Time sampled = 0;
  std::int64_t cpu_usec = 0;  // user + system CPU time
  std::int64_t rss_bytes = 0, max_rss_bytes = 0;
  std::int64_t vm_bytes = 0, max_vm_bytes = 0;
  std::int64_t pages = 0;  // major page faults
  std::int64_t read_bytes = 0, write_bytes = 0;
  std::vector<std::int64_t> pids;
};

// What `lockstep logs` asks for: a run's output, which a backend may keep itself (pods' logs) or
// read from the file the job wrote (agents on this host).
struct LogsRequest {
  RunId run;
  std::string node;         // the run's first node
  std::string stdout_path;  // where the job writes its output, absolute
  std::uint32_t uid = 0;    // the job's user: a file of anyone else is not read
};

// sbcast (docs/api.md, "Broadcast"): one piece of a file, written on every node of a running
// job as the job's user, never following a link at the file's name. Pieces come in order, each
// once every node took the one before; the first (offset 0) creates the file (0700), replacing
// one that exists only with `force`; the last sets its permission bits, and its times when
// `mtime` is set (sbcast -p).
struct BroadcastOrder {
  RunId run;
  std::vector<std::string> nodes;
  std::uint32_t uid = 0, gid = 0;
  std::string user;
  std::string path;  // absolute
  std::uint64_t offset = 0;
  std::string data;
  bool last = false;
  bool force = false;
  std::uint32_t mode = 0700;          // permission bits, set with the last piece
  std::int64_t atime = 0, mtime = 0;  // seconds; 0: the times stay as the write left them
  std::chrono::milliseconds timeout{10000};  // per node; a node silent past it failed
};

// One node's outcome of a BroadcastOrder: `error` empty when it wrote its piece, else why not
// in the words of strerror ("File exists"), as slurmd answers sbcast.
struct BroadcastResult {
  std::string node;
  std::string error;
};

// Events from a backend. Every call only queues the event for the controller and returns at
// once: it may be made from any thread, with the backend's own locks held, and never calls
// back into the backend.
class EventSink {
 public:
  virtual ~EventSink() = default;
  // Nodes as they are now. `complete`: these are all the nodes the backend serves, and any node
  // it reported before and leaves out now is gone (DOWN, "node deleted").
  virtual void NodesReported(std::vector<NodeReport> nodes, bool complete) = 0;
  // The backend knows what runs on `nodes` now (an agent registered, or pods were listed): the
  // runs in `alive` run there; any other run whose first node is among them ended unseen (it
  // is requeued, or ends NODE_FAIL), and a run in `alive` that the controller no longer wants
  // is terminated. `nodes` empty: every node this backend serves (it knows all of its runs).
  virtual void RunsAlive(std::vector<std::string> nodes, std::vector<RunId> alive) = 0;
  // A run's batch step (or every pod of it) ended.
  virtual void RunExited(RunId run, ExitStatus status) = 0;
  // A launch that could not be made whole: the job goes back to the queue (or fails when it
  // may not be requeued), with `why` in the log.
  virtual void LaunchFailed(RunId run, std::string why) = 0;
  // A step's tasks on `node` ended (the worst exit of them).
  virtual void StepNodeExited(JobId job, std::int32_t step, std::string node,
                              ExitStatus status) = 0;
  virtual void StepOutput(std::vector<OutputChunk> chunks) = 0;
  // What a node's health checks found (backend/health.h); the controller drains and resumes.
  virtual void NodeHealth(NodeHealthReport report) = 0;
  virtual void JobHookFailed(JobHookFailure failure) = 0;
  // Samples of running tasks' usage (sstat); backends that cannot measure never call it.
  virtual void StepUsage(std::vector<TaskUsage> samples) { (void)samples; }
};

// Commands to a backend. The controller calls them without its lock, from one thread at a time,
// in the order it decided them; an implementation queues the work for its own threads. Errors
// say the command could not be taken (the run is unknown, the backend is stopping).
class Backend {
 public:
  virtual ~Backend() = default;
  virtual Status Launch(LaunchOrder order) = 0;  // all of the job's tasks, or none
  // SIGTERM now, SIGKILL after `grace` (0: at once).
  virtual Status Terminate(RunId run, Seconds grace) = 0;
  // Every process of the run: its batch script and children, and its steps (scancel --full).
  virtual Status Signal(RunId run, int signo) = 0;
  // The batch script's shell alone, none of its children nor steps (scancel --batch,
  // sbatch --signal=B:...). A backend that cannot tell them apart refuses.
  virtual Status SignalBatch(RunId run, int signo) {
    (void)run;
    return FailedPrecondition("signal " + std::to_string(signo) +
                              " cannot be sent to the batch script alone here");
  }
  // Steps: only where the backend can start processes inside a running job's allocation.
  virtual bool SupportsSteps() const = 0;
  virtual Status LaunchStep(StepLaunch step) = 0;
  // signo 0: SIGTERM, then SIGKILL after `grace`.
  virtual Status SignalStep(JobId job, std::int32_t step, int signo, Seconds grace) = 0;
  // Whether steps may ask for an MPI process manager (StepLaunch::mpi).
  virtual bool SupportsMpi() const { return false; }
  // scontrol suspend/resume: every task of the run (its batch step and its steps, on every
  // node) stopped where it runs, or continued. Only where SupportsSuspend(); the others never
  // get the call.
  virtual bool SupportsSuspend() const { return false; }
  // Whether jobs run in container images (Kubernetes), where they see only the storage mounted
  // into them and --container-mounts, rather than on their hosts' own file systems.
  virtual bool RunsJobsInImages() const { return false; }
  virtual Status Suspend(RunId run, bool stop) {
    (void)stop;
    return FailedPrecondition("job " + std::to_string(run.job) +
                              ": this backend cannot suspend jobs");
  }
  // sbcast: writes the order's piece on each of its nodes and answers each node's outcome, in
  // the order's node order. Called from request threads, without the controller's lock; blocks
  // up to the order's timeout. A backend that cannot write into its jobs' nodes refuses.
  virtual Result<std::vector<BroadcastResult>> Broadcast(const BroadcastOrder& order) {
    (void)order;
    return FailedPrecondition("sbcast: this backend cannot copy files to a job's nodes");
  }
  // The output of the run (`lockstep logs`). Called from request threads, without the
  // controller's lock; it may block on the backend's API.
  virtual Result<std::string> Logs(const LogsRequest& request) = 0;
};

}  // namespace lockstep::backend
