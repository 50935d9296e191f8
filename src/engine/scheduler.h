// The stateful scheduler: the engine's state kept between events, so that planning after one
// event costs what changed plus the backfill scan, not a rebuild of the whole cluster and queue.
//
//   Scheduler sched(cluster, options);          // nodes, partitions, QoS, accounts (and jobs)
//   sched.SetPending(job);                      // a submission, or a pending job that changed
//   Plan p = sched.Plan(now);                   // what plan(snapshot(), options) would give
//   sched.StartJob(id, p.starts[0].allocation); // the caller started it: pending -> running
//   sched.SetFinished(id, Outcome::kCompleted); // it ended
//
// It keeps its own Snapshot (snapshot() shows it) together with what a pass reads
// (EngineState: shapes, the availability planner holding the running jobs, the free-node index,
// partition sums) and the queue in order with cached priorities. Each event updates those in
// place; Plan runs one pass over them and then undoes what the pass itself changed. The pure
// plan() stays as its oracle: for the same jobs, nodes, usage and clock the two give the same
// plan (scheduler_differential_test.cc checks it after every event of long random sequences).
// The queue is kept in blocks with summaries, so that a plan of decisions passes over the
// blocks whose jobs cannot start now without reading them (queue_blocks.h, pass_skip.cc).
//
// Priorities: a job's priority is computed when it arrives or changes. Factors that vary with
// time (age) are recomputed for all jobs when the clock enters a new PriorityCalcPeriod
// (PolicyOptions::priority_calc_period; 0: at every Plan), fair share when usage was set.
//
// Finished jobs are kept for the dependencies of others for PolicyOptions::min_job_age
// after SetFinished (measured on the clock of the last Plan), then forgotten, except while a
// pending job's dependency names them: a job whose afterok was met does not turn
// DependencyNeverSatisfied because it waited for resources longer than MinJobAge (Slurm
// resolves a dependency once, when its target ends).
//
// Ownership: the Scheduler owns copies of everything it is given. Thread-safety: none; one
// thread at a time (a controller calls it from its scheduling thread only). Pure like plan():
// no clock, no I/O, no threads.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/model.h"
#include "engine/pass.h"
#include "engine/priority.h"
#include "engine/queue_order.h"

namespace lockstep::engine {

class Scheduler {
 public:
  // `cluster`: nodes, partitions, QoS, accounts, associations and the clock; its pending,
  // running and finished jobs are the initial jobs.
  Scheduler(Snapshot cluster, PolicyOptions options);
  ~Scheduler();
  Scheduler(Scheduler&&) noexcept;
  Scheduler& operator=(Scheduler&&) noexcept;

  // ---- Jobs ----
  // Puts `job` in the queue, replacing what was known of it (a running job goes back).
  void SetPending(Job job);
  // Puts `job`, with its start time and allocation, among the running jobs.
  void SetRunning(Job job);
  // Records how `id` ended, for the dependencies of others (and forgets it as a job); `since`:
  // its start, or its end if it never started (FinishedJob::since).
  void SetFinished(JobId id, Outcome outcome, Time since = 0);
  // Forgets `id` entirely.
  void Remove(JobId id);

  // ---- The lifecycle of a planned job ----
  // Pending `id` started now on `allocation` (a Start of the last plan). False when unknown.
  bool StartJob(JobId id, const Allocation& allocation);
  // Running `id` goes back to the queue (preempted with REQUEUE, or its node failed).
  bool Requeue(JobId id);

  // ---- The cluster ----
  void SetNodeState(std::uint32_t node, NodeState state, std::string reason = {});
  // A node's resources or topology changed: the pass's state is rebuilt.
  void SetNode(std::uint32_t node, Node n);
  // Nodes, switches, blocks, GPU types, features and partitions from `cluster` (its jobs and
  // the rest are ignored): the pass's state is rebuilt. Node indices of running jobs must
  // still hold, or those jobs be set again.
  void SetCluster(const Snapshot& cluster);
  // Decayed fair-share usage of one association (taken into account at the next Plan).
  void SetUsage(std::uint32_t association, double usage);
  // Partitions, QoS, accounts or associations changed: the pass's state is rebuilt.
  void SetLimits(std::vector<Partition> partitions, std::vector<Qos> qos,
                 std::vector<Account> accounts, std::vector<Association> associations);
  void SetPolicy(PolicyOptions options);
  // The reservations' windows (Snapshot::windows): the pass's state is rebuilt, and again
  // whenever the clock reaches a window's start or end.
  void SetWindows(std::vector<Window> windows);

  // One planning pass at `now` (never earlier than the last). With PlanDetail::kFull the plan
  // equals plan(snapshot(), options()) up to the order of Plan::priorities.
  engine::Plan Plan(Time now, PlanDetail detail = PlanDetail::kFull);

  const Snapshot& snapshot() const { return *s_; }
  // Pending jobs the last Plan passed over in skipped blocks of the queue (pass_skip.cc).
  std::size_t SkippedJobsForTest() const { return skipped_jobs_; }
  // Cuts the queue into blocks of at most `capacity` jobs (QueueBlocks), so that small tests
  // exercise skipping; the queue is filed again at the next Plan.
  void SetQueueBlockCapacityForTest(std::size_t capacity);
  const PolicyOptions& options() const { return o_; }
  // The job if it is pending or running, else nullptr; valid until the next change.
  const Job* Find(JobId id) const;

 private:
  enum class List : std::uint8_t { kPending, kRunning, kFinished };
  struct Slot {
    List list;
    std::uint32_t index;
  };
  struct Deadline {  // a running job's assumed end, to move it when the clock passes it
    Time end;
    JobId id;
    bool operator>(const Deadline& o) const { return end > o.end; }
  };

  void AddPending(Job job);
  void AddRunning(Job job);
  void AddFinished(FinishedJob f);
  void Unplace(JobId id);  // takes the job out of whichever list holds it
  // Take job j (r) out of its list; with `taken`, moved there rather than destroyed.
  void RemovePendingAt(std::uint32_t j, Job* taken = nullptr);
  void RemoveRunningAt(std::uint32_t r, Job* taken = nullptr);
  void RemoveFinishedAt(std::uint32_t f);
  // Running holds of job r on every node of its allocation: +1 takes, -1 gives back.
  void ChangeRunningHolds(std::uint32_t r, int sign);
  void SetRunningEnd(std::uint32_t r, Time end);
  QueueEntry EntryOf(std::uint32_t j) const;
  // The part of the queue job j is filed in (QueueState::order or ::special).
  QueueBlocks& QueueOf(std::uint32_t j);
  void RefreshPriorities();
  // Puts the jobs queued since the last merge into the queue's order: one merge for a burst
  // of submissions (a million-task array) instead of one vector insertion per job.
  void MergeArrivals();
  void MoveOverdueEnds();
  void ForgetOldFinished();
  // Counts, per target, the dependencies of pending jobs that name it (+1 or -1).
  void CountAwaited(const Job& pending, int sign);
  void Rebuild();

  std::unique_ptr<Snapshot> s_;
  PolicyOptions o_;
  std::unique_ptr<EngineState> st_;
  // The order in blocks (queue_blocks.h); breakdowns are computed again for full plans.
  QueueState queue_;
  std::vector<QueueEntry> arrivals_;  // queued since the last MergeArrivals, in arrival order
  std::vector<std::uint32_t> priority_totals_;  // per s_->pending index
  PriorityContext ctx_;
  bool priorities_stale_ = true;
  std::size_t skipped_jobs_ = 0;  // by the last Plan
  std::unordered_map<JobId, Slot> slots_;
  std::priority_queue<Deadline, std::vector<Deadline>, std::greater<>> deadlines_;
  std::vector<Time> finished_time_;                 // per s_->finished: when it was set
  std::deque<std::pair<Time, JobId>> finished_at_;  // in the order SetFinished was called
  std::unordered_map<JobId, std::uint32_t> awaited_;  // target -> pending dependencies on it
  std::vector<std::pair<Time, JobId>> old_but_awaited_;  // past min_job_age, still awaited
};

}  // namespace lockstep::engine
