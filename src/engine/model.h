// The engine's model of a cluster and its jobs: the Snapshot that goes into plan() and the Plan
// that comes out. Plain data, no behaviour: the controller, the simulator and the tests build
// Snapshots; only the engine interprets them.
//
// Names (users, accounts, partitions, GPU types, features) are interned by whoever builds the
// Snapshot: the engine works on small integer indexes into the Snapshot's tables.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boost/smart_ptr/intrusive_ptr.hpp>
#include <boost/smart_ptr/intrusive_ref_counter.hpp>

#include "common/types.h"

namespace lockstep::engine {

inline constexpr std::uint32_t kNone = 0xffffffffu;
// GPU devices per node are tracked as a 64-bit mask: whole GPUs plus MIG slices.
inline constexpr int kMaxDevicesPerNode = 64;
// Distinct GPU types (models or MIG profiles) on one node.
inline constexpr int kMaxGpuTypesPerNode = 4;

// Trackable resources, used for limits (TRES) and usage.
struct Tres {
  std::int64_t cpus = 0;
  std::int64_t mem_mb = 0;
  std::int64_t gpus = 0;
  std::int64_t nodes = 0;

  Tres& operator+=(const Tres& o) {
    cpus += o.cpus, mem_mb += o.mem_mb, gpus += o.gpus, nodes += o.nodes;
    return *this;
  }
  Tres& operator-=(const Tres& o) {
    cpus -= o.cpus, mem_mb -= o.mem_mb, gpus -= o.gpus, nodes -= o.nodes;
    return *this;
  }
};

// A limit of kUnlimited in a field means that field is not limited.
struct TresLimit {
  std::int64_t cpus = kUnlimited;
  std::int64_t mem_mb = kUnlimited;
  std::int64_t gpus = kUnlimited;
  std::int64_t nodes = kUnlimited;
};

// ---------------------------------------------------------------------------------------------
// Nodes and topology

// One schedulable GPU device: a whole GPU, or a MIG slice of one (then `parent` names the
// physical GPU's index and the whole GPU is not offered on its own).
struct GpuDevice {
  std::uint16_t index = 0;     // device index on its node (nvidia-smi's numbering)
  std::uint32_t type = kNone;  // index into Snapshot::gpu_types ("h100", "a100_3g.20gb")
  std::int16_t parent = -1;    // MIG: the physical GPU's index
  std::string uuid;            // "GPU-..." or "MIG-...", may be empty (virtual GPUs)
};

enum class NodeState : std::uint8_t {
  kUp,     // schedulable
  kDrain,  // runs what it has, takes nothing new
  kDown,   // unusable; the controller ends or requeues its jobs
};

struct Node {
  std::string name;
  std::int32_t cpus = 0;
  std::int64_t mem_mb = 0;
  std::vector<GpuDevice> gpus;  // at most kMaxDevicesPerNode
  std::uint64_t features = 0;   // bit i = Snapshot::features[i]
  NodeState state = NodeState::kUp;
  std::string reason;
  std::uint32_t leaf_switch = kNone;  // index into Snapshot::switches (topology/tree)
  std::uint32_t block = kNone;        // index into Snapshot::blocks (topology/block)
  std::int32_t weight = 1;            // Slurm's node Weight: lower is preferred
};

// A switch of topology/tree. Leaves have nodes; inner switches have children.
struct Switch {
  std::string name;
  std::uint32_t parent = kNone;
};

// ---------------------------------------------------------------------------------------------
// Partitions, QoS, accounts

enum class PreemptMode : std::uint8_t { kOff, kCancel, kRequeue };

struct Partition {
  std::string name;
  std::vector<std::uint32_t> nodes;              // indexes into Snapshot::nodes
  Seconds max_time = kUnlimited;                 // MaxTime
  Seconds default_time = kUnlimited;             // DefaultTime, when a job names no limit
  std::int32_t max_nodes = 0x7fffffff;           // MaxNodes per job
  std::uint32_t priority_tier = 1;               // PriorityTier: order, and preemption by partition
  std::uint32_t priority_job_factor = 1;         // PriorityJobFactor: the partition priority factor
  PreemptMode preempt_mode = PreemptMode::kOff;  // how jobs of this partition are preempted
  Seconds grace_time = 0;                        // GraceTime of preempted jobs
};

struct Qos {
  std::string name;
  std::uint32_t priority = 0;                    // feeds the QoS priority factor
  Seconds max_wall = kUnlimited;                 // MaxWall
  TresLimit max_tres_per_user;                   // MaxTRESPerUser (running jobs of one user)
  TresLimit grp_tres;                            // GrpTRES (all running jobs of the QoS)
  std::int64_t grp_jobs = kUnlimited;              // GrpJobs: running jobs of the QoS
  std::int64_t max_jobs_per_user = kUnlimited;     // MaxJobsPerUser: running jobs of one user
  std::int64_t max_jobs_per_account = kUnlimited;  // MaxJobsPerAccount: of one account
  std::vector<std::uint32_t> preempts;           // Preempt=: QoS this one may preempt
  PreemptMode preempt_mode = PreemptMode::kOff;  // how jobs of this QoS are preempted
  Seconds grace_time = 0;
};

// A node of the account tree (Fair Tree). Index 0 is the root.
struct Account {
  std::string name;
  std::uint32_t parent = kNone;
  std::uint32_t shares = 1;
  TresLimit grp_tres;  // GrpTRES of the account's association: all its running jobs
  std::int64_t grp_jobs = kUnlimited;  // GrpJobs: running jobs of the account and below
  // MaxJobs: running jobs of each user association below that sets none of its own (Slurm's
  // associations inherit their parent's limits).
  std::int64_t max_jobs = kUnlimited;
};

// A user's association with an account: the leaf of the fair-share tree.
struct Association {
  std::uint32_t user = 0;
  std::uint32_t account = 0;
  std::uint32_t shares = 1;
  double usage = 0;  // decayed usage (billing-seconds), kept by the controller or simulator
  std::int64_t max_jobs = kUnlimited;  // MaxJobs of this association: its running jobs
};

// ---------------------------------------------------------------------------------------------
// Jobs

// Slurm's -w/--nodelist and -x/--exclude: nodes the allocation must include (it may add others
// when it needs more nodes) and nodes it must not use. Node indices into Snapshot::nodes, each
// list sorted and without repeats.
// Shared by the jobs that asked alike, through an 8-byte counted pointer (NodeFilterPtr): most
// jobs have none, and a std::shared_ptr would cost every Job 16 bytes.
struct NodeFilter : boost::intrusive_ref_counter<NodeFilter, boost::thread_safe_counter> {
  std::vector<std::uint32_t> required, excluded;
  bool Requires(std::uint32_t n) const {
    return std::binary_search(required.begin(), required.end(), n);
  }
  bool Excludes(std::uint32_t n) const {
    return std::binary_search(excluded.begin(), excluded.end(), n);
  }
  bool operator==(const NodeFilter& o) const {
    return required == o.required && excluded == o.excluded;
  }
};
using NodeFilterPtr = boost::intrusive_ptr<const NodeFilter>;

// What one job asks for. Per-node quantities are derived by the engine (see request.h).
struct JobRequest {
  std::int32_t min_nodes = 1;
  std::int32_t max_nodes = 0;  // 0: same as min_nodes
  std::int32_t ntasks = 1;
  std::int32_t ntasks_per_node = 0;  // 0: not given
  std::int32_t cpus_per_task = 1;
  std::int64_t mem_per_node_mb = 0;  // --mem
  std::int64_t mem_per_cpu_mb = 0;   // --mem-per-cpu
  std::int64_t mem_per_gpu_mb = 0;   // --mem-per-gpu
  std::int32_t gpus = 0;             // -G/--gpus: in total
  std::int32_t gpus_per_node = 0;    // --gpus-per-node, --gres=gpu:N
  std::int32_t gpus_per_task = 0;    // --gpus-per-task
  std::uint32_t gpu_type = kNone;    // index into Snapshot::gpu_types; kNone: any
  std::uint64_t features = 0;        // -C: every bit must be on the node
  bool exclusive = false;            // --exclusive: whole nodes
  bool mem_whole_node = false;       // --mem=0: all of each node's memory (no other size given)
  // --exclusive=user: its nodes are shared only with jobs of its own user, while it runs
  // (Pass::UserConflictUntil).
  bool exclusive_user = false;
  std::int32_t max_switches = 0;     // --switches=N: at most N leaf switches (0: any)
  Seconds switches_wait = 0;         // --switches=N@wait: then any
  Seconds time_limit = 0;            // -t; 0: the partition's DefaultTime
  // -w / -x; null (most jobs): any node of the partition. Shared: jobs are copied often.
  NodeFilterPtr node_filter;
};

enum class DependencyKind : std::uint8_t { kAfter, kAfterAny, kAfterOk, kAfterNotOk, kSingleton };

struct Dependency {
  DependencyKind kind = DependencyKind::kAfterAny;
  JobId target = 0;   // unused for kSingleton
  Seconds delay = 0;  // kAfter only (after:ID+MIN): this long after the target's start
};

// How a job that is no longer pending or running ended, for dependencies.
enum class Outcome : std::uint8_t { kCompleted, kFailed, kCancelled };

struct FinishedJob {
  JobId id = 0;
  Outcome outcome = Outcome::kCompleted;
  // Where an after:ID+MIN dependency counts from: the job's start, or its end when it never
  // started (cancelled while pending); 0: long ago.
  Time since = 0;
};

struct Allocation;

// One node's share of an allocation.
struct NodeAllocation {
  std::uint32_t node = 0;
  std::int32_t cpus = 0;
  std::int64_t mem_mb = 0;
  std::uint64_t gpus = 0;      // bit i = the node's gpus[i]; empty in reservations
  std::int32_t gpu_count = 0;  // GPUs taken; reservations choose devices only at start
};

struct Allocation {
  std::vector<NodeAllocation> nodes;
};

struct Job {
  JobId id = 0;
  std::string name;
  std::uint32_t user = 0;       // uid
  std::uint32_t assoc = 0;      // index into Snapshot::associations (gives the account)
  std::uint32_t partition = 0;  // index into Snapshot::partitions
  std::uint32_t qos = 0;        // index into Snapshot::qos
  JobRequest req;
  Time submit_time = 0;
  Time begin_time = 0;  // --begin
  std::int32_t nice = 0;
  std::uint32_t admin_priority = 0;  // scontrol update Priority=: fixes the priority when > 0
  // (The small fields are kept together: a million pending jobs pay for every byte of padding.)
  bool held_by_user = false;  // -H, scontrol hold
  bool held_by_admin = false;
  bool requeue = true;            // may go back to the queue (preemption, node failure)
  bool dependencies_any = false;  // "?" joined: any one suffices; else all
  // Heterogeneous jobs (sbatch ... : ...): `het_size` components with consecutive ids, this one
  // at `het_offset` (the leader, at 0, has id - het_offset). They start together or not at all
  // (pass_het.cc); 0: not a component.
  std::uint8_t het_offset = 0;
  std::uint8_t het_size = 0;
  // --reservation: the Window (by id) whose nodes alone it runs on, once it has started;
  // kNone: any node but those of a window in force (in the padding after the flags).
  std::uint32_t reservation = kNone;
  std::vector<Dependency> dependencies;
  // Arrays: every task is a Job of its own in the Snapshot.
  JobId array_job_id = 0;
  std::uint32_t array_task_id = 0;
  std::uint32_t array_max_running = 0;  // --array=...%N; 0: no throttle
  // Running jobs only:
  Time start_time = 0;
  Allocation allocation;
};

// A reservation's window (scontrol create reservation): over [start, end) its nodes are for
// its own jobs (Job::reservation == id). Before it starts they are held whole from `start`, so
// no other job is started that would run into it (and the time before it is backfilled); while
// it is in force only its jobs are placed on them; after `end` they are everyone's again.
// `flex` (Slurm's FLEX): its jobs may also run on nodes of no window, and on its own after it.
struct Window {
  std::uint32_t id = 0;
  Time start = 0, end = 0;
  std::vector<std::uint32_t> nodes;  // indices into Snapshot::nodes, sorted, without repeats
  bool flex = false;
};

// Everything the engine may look at. `now` is the only clock.
struct Snapshot {
  Time now = 0;
  std::vector<Node> nodes;
  std::vector<Switch> switches;
  std::vector<std::string> blocks;
  std::vector<std::string> gpu_types;
  std::vector<std::string> features;
  std::vector<Partition> partitions;
  std::vector<Qos> qos;
  std::vector<Account> accounts;  // [0] is the root
  std::vector<Association> associations;
  std::vector<Job> pending;
  std::vector<Job> running;
  std::vector<FinishedJob> finished;  // targets of dependencies that have ended
  std::vector<Window> windows;        // reservations' windows not yet ended
};

// ---------------------------------------------------------------------------------------------
// Policy

struct PriorityWeights {
  std::uint32_t age = 0;
  std::uint32_t fairshare = 0;
  std::uint32_t job_size = 0;
  std::uint32_t partition = 0;
  std::uint32_t qos = 0;
  std::uint32_t tres_cpu = 0;
  std::uint32_t tres_mem = 0;
  std::uint32_t tres_gpu = 0;
  Seconds max_age = 7 * 24 * 3600;  // PriorityMaxAge
  bool favor_small = false;         // PriorityFavorSmall
};

enum class PlacementPolicy : std::uint8_t {
  kBestFit,        // pack: the nodes that the job fills most
  kTopologyFirst,  // the fewest leaf switches (or blocks) first, then best fit within them
};

enum class PreemptType : std::uint8_t { kOff, kPartitionPriority, kQos };

// One options struct for the engine, with Slurm's defaults where Slurm has one.
struct PolicyOptions {
  // 0 = FIFO without backfill, 1 = EASY, N = conservative for the first N blocked jobs.
  int reservation_depth = 1;
  PlacementPolicy placement = PlacementPolicy::kTopologyFirst;
  PriorityWeights weights;
  PreemptType preempt = PreemptType::kOff;
  // Jobs examined per pass, like Slurm's bf_max_job_test (0: all).
  int max_jobs_tested = 0;
  // Compute an expected start for pending jobs that hold no reservation.
  bool estimate_starts = true;
  // Slurm's PriorityCalcPeriod: the age factor is computed for the start of the period the
  // clock is in, so priorities (and the queue's order) change only once a period. 0: every pass.
  Seconds priority_calc_period = 0;
  // Rounds of the earliest-start search for one reservation (each round tries the next moment
  // at which some node's availability changes). 0: no bound, so a reservation is found whenever
  // one exists. A job the bound stops pends with reason ReservationSearchLimit.
  int max_reservation_rounds = 0;
  // Slurm's MinJobAge: how long the Scheduler remembers a finished job for the dependencies of
  // others. A dependency on a job it no longer knows counts as an old one (see eligibility.h).
  Seconds min_job_age = 300;
};

// How much of the plan to write out.
enum class PlanDetail : std::uint8_t {
  kFull,       // everything this file describes
  kDecisions,  // starts, preemptions, reservations, and pending entries only for jobs held back
               // by something other than Priority or Resources; no priorities (lockstepd's
               // passes on events)
  kStarts,     // as kDecisions without the reservations (a replay's needs): a reservation that
               // no later job's placement consults is then never searched for
};

// ---------------------------------------------------------------------------------------------
// Plan

// Why a job did not start. Slurm's names where Slurm has one (squeue's %r).
enum class PendingReason : std::uint8_t {
  kNone,
  kPriority,
  kResources,
  kDependency,
  kDependencyNeverSatisfied,
  kBeginTime,
  kJobHeldUser,
  kJobHeldAdmin,
  kPartitionTimeLimit,
  kPartitionNodeLimit,
  kPartitionConfig,  // asks for more than any node of its partition has
  kReqNodeNotAvail,  // the nodes it needs are down or drained
  kQOSMaxWallDurationPerJobLimit,
  kQOSMaxGRESPerUser,
  kQOSMaxCpuPerUserLimit,
  kQOSMaxMemoryPerUser,
  kQOSMaxNodePerUserLimit,
  kQOSGrpGRES,
  kQOSGrpCpuLimit,
  kQOSGrpMemLimit,
  kQOSGrpNodeLimit,
  kAssocGrpGRES,
  kAssocGrpCpuLimit,
  kAssocGrpMemLimit,
  kAssocGrpNodeLimit,
  kJobArrayTaskLimit,
  kBadConstraints,
  kReservationSearchLimit,  // max_reservation_rounds stopped the search for its reservation
  kQOSGrpJobsLimit,
  kQOSMaxJobsPerUserLimit,
  kQOSMaxJobsPerAccountLimit,
  kAssocGrpJobsLimit,
  kAssocMaxJobsLimit,
};

const char* PendingReasonName(PendingReason r);

// The priority of a job and its parts, each already weighted, as `sprio` shows them.
struct PriorityBreakdown {
  std::uint32_t total = 0;
  double age = 0;
  double fairshare = 0;
  double job_size = 0;
  double partition = 0;
  double qos = 0;
  double tres = 0;
  std::int32_t nice = 0;
};

struct Start {
  JobId job = 0;
  Allocation allocation;
  bool backfilled = false;  // started ahead of a higher-priority job that is waiting
};

struct Preemption {
  JobId victim = 0;
  JobId for_job = 0;
  PreemptMode mode = PreemptMode::kRequeue;  // kRequeue falls back to kCancel when not requeueable
  Seconds grace = 0;
};

struct Pending {
  JobId job = 0;
  PendingReason reason = PendingReason::kNone;
  Time expected_start = 0;        // 0: not known
  bool reserved = false;          // holds a reservation: nothing may delay it
  Allocation reservation;         // the resources reserved from expected_start, when reserved
  std::vector<JobId> blocked_by;  // running jobs whose end the reservation waits for
};

struct Plan {
  std::vector<Start> starts;
  std::vector<Preemption> preemptions;
  std::vector<Pending> pending;  // one for every pending job not started
  std::vector<std::pair<JobId, PriorityBreakdown>> priorities;  // every pending job
  std::int64_t jobs_tested = 0;                                 // jobs the pass looked at
};

// The engine's entry point: pure, deterministic. The Scheduler (scheduler.h) gives the same
// plans while keeping its state between calls.
Plan plan(const Snapshot& snapshot, const PolicyOptions& options);

}  // namespace lockstep::engine
