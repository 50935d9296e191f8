// The controller's record of one job: what was asked (the JobSpec, without its script and
// environment, which stay in the store until launch), who asked, and where it is in its life.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "common/types.h"
#include "engine/model.h"
#include "jobspec/job_spec.h"

namespace lockstep::controller {

// Slurm's job states (squeue %T). COMPLETING is a running job whose processes are being ended.
enum class JobState : std::uint8_t {
  kPending,
  kRunning,
  kCompleting,
  kCompleted,
  kFailed,
  kCancelled,
  kTimeout,
  kNodeFail,
  kPreempted,
  kOutOfMemory,
  // scontrol suspend: its tasks stopped where they run, its allocation kept, its time limit
  // not running (controller_suspend.cc).
  kSuspended,
};

const char* JobStateName(JobState s);                      // "PENDING"
const char* JobStateCompact(JobState s);                   // "PD"
bool ParseJobState(std::string_view text, JobState* out);  // long or compact, any case
bool IsFinished(JobState s);
// Holds its allocation: running, completing or suspended.
bool HoldsAllocation(JobState s);

// One node's share of a running job (backend.h): by node name, so that it survives a restart.
using PlacedNode = backend::PlacedNode;

struct JobEntry {
  JobId id = 0;
  // What was asked, shared with the jobs that asked alike (SpecInterner); its script and
  // environment are cleared once stored. Changed by replacing, never in place.
  std::shared_ptr<const jobspec::JobSpec> spec;
  std::uint32_t uid = 0, gid = 0;
  std::string user;
  JobState state = JobState::kPending;
  std::string reason = "None";  // pending reason, or why it ended ("TimeLimit", "NodeFail", ...)
  Time submit_time = 0, start_time = 0, end_time = 0, expected_start = 0;
  std::vector<PlacedNode> placement;
  std::int32_t exit_code = 0, signal = 0;
  std::int32_t restart_count = 0;
  std::uint32_t priority = 0;
  std::uint32_t admin_priority = 0;
  bool held_by_user = false, held_by_admin = false;
  // scontrol requeuehold State=SpecialExit: the held job shows as SPECIAL_EXIT (squeue SE)
  // until it is released, as Slurm's JOB_SPECIAL_EXIT.
  bool special_exit = false;
  // Held by requeuehold: its reason reads "job requeued in held state", as Slurm 22.05's
  // state_desc, until it is held again or released.
  bool requeue_held = false;
  JobId array_job_id = 0;  // arrays: every task is an entry of its own
  std::uint32_t array_task_id = 0;
  // Heterogeneous jobs: every component is an entry of its own, ids het_job_id (the leader,
  // whose script runs) to het_job_id + het_size - 1; this one at het_offset. 0: not one.
  JobId het_job_id = 0;
  std::uint32_t het_offset = 0, het_size = 0;
  bool cancel_requested = false;  // the end will be recorded as CANCELLED
  bool timed_out = false;         // the end will be recorded as TIMEOUT
  // Preempted (controller_apply.cc): the end will be recorded as PREEMPTED (PreemptMode=CANCEL,
  // or a job that may not be requeued), or the job is requeued when its run has ended
  // (PreemptMode=REQUEUE: after SIGTERM and the grace, so that it may checkpoint).
  bool preempted = false;
  bool requeue_at_end = false;
  // The run (restart_count) that was sent --signal's warning; -1: none. In memory only: after a
  // restart of lockstepd a run still due gets it again, which a handler for it must bear.
  std::int32_t warned_run = -1;
  std::int32_t next_step_id = 0;
  // scontrol suspend: when the current suspension began (0: not suspended), and the seconds of
  // this run's earlier suspensions, which are added to its time limit as Slurm does.
  Time suspend_time = 0;
  Seconds suspended_seconds = 0;
  // Why its last run did not complete (docs/health.md, "Failure attribution"): user, oom,
  // timeout, cancelled, preempted, node, gpu, launch or scheduler, with the evidence; empty for
  // a job whose runs all completed. `failure_run` is the run it was decided for.
  std::string failure_cause, failure_detail;
  std::int32_t failure_run = -1;
  // Memory only: an application XID seen on one of the run's GPUs, evidence for a `user` cause.
  std::string app_evidence;
  // scontrol update Comment= (Slurm's job comment): shown, never acted on.
  std::string comment;

  bool is_array_task() const { return array_job_id != 0; }
  bool is_het_component() const { return het_job_id != 0; }
  bool is_het_leader() const { return het_job_id != 0 && het_offset == 0; }
  // Seconds of this run spent suspended up to `now`, the current suspension included.
  Seconds SuspendedUntil(Time now) const {
    return suspended_seconds + (suspend_time > 0 && now > suspend_time ? now - suspend_time : 0);
  }
  // The state users see: "SPECIAL_EXIT" for a pending job requeued so, else JobStateName.
  const char* ShownState() const;
  // "42", "40_2" or "43+1", as squeue and sacct show job ids.
  std::string DisplayId() const;
};

// Whether the backend runs something for the job: every job but a heterogeneous job's components
// after the first, whose nodes serve the leader's steps and which end with it.
inline bool HasOwnRun(const JobEntry& e) { return e.het_job_id == 0 || e.het_offset == 0; }

// The store's key of a job's record: its id, zero-padded to 20 digits so keys sort as ids do.
std::string JobKey(JobId id);

// Persistence: the whole entry as JSON (the store's value) and back. `spec_json` is
// jobspec::JobSpecToJson(*e.spec), when the caller has it already (SpecInterner::JsonOf); empty
// for an array task whose spec is its array's, stored once in the table "array_specs" (the
// record then names it, and EntryFromJson leaves `spec` null for the caller to fill).
std::string EntryToJson(const JobEntry& e);
std::string EntryToJson(const JobEntry& e, std::string_view spec_json);
Result<JobEntry> EntryFromJson(std::string_view json);

// What recovery and accounting decide on before they read a whole record (a job purged from
// memory after MinJobAge is read back from the store only when asked for): the record parsed
// without building its spec.
struct JobRecordHead {
  JobId id = 0;
  JobState state = JobState::kPending;
  Time submit_time = 0, end_time = 0;
  std::string user;
  JobId array_job_id = 0;
  std::uint32_t array_task_id = 0;
  JobId het_job_id = 0;
};
Result<JobRecordHead> HeadFromJson(std::string_view json);

}  // namespace lockstep::controller
