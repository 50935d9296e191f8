#include "sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <queue>

#include "sim/job_index.h"
#include "sim/workload.h"
#include "common/hostlist.h"
#include "engine/fairshare.h"
#include "engine/scheduler.h"
#include "reservation/reservation.h"

namespace lockstep::sim {
namespace {

using engine::Job;
using engine::PendingReason;

// Reasons that no amount of waiting cures in a replay: nothing changes the cluster or the job.
bool NeverRuns(PendingReason r) {
  switch (r) {
    case PendingReason::kPartitionTimeLimit:
    case PendingReason::kPartitionNodeLimit:
    case PendingReason::kPartitionConfig:
    case PendingReason::kBadConstraints:
    case PendingReason::kReqNodeNotAvail:
    case PendingReason::kQOSMaxWallDurationPerJobLimit:
    case PendingReason::kDependencyNeverSatisfied:
      return true;
    default:
      return false;
  }
}

// Runs of nodes alike in CPUs and GPUs, in node order.
std::vector<NodeShapeCount> NodeShapes(const std::vector<engine::Node>& nodes) {
  std::vector<NodeShapeCount> shapes;
  for (const engine::Node& n : nodes) {
    auto gpus = static_cast<std::int32_t>(n.gpus.size());
    if (shapes.empty() || shapes.back().cpus != n.cpus || shapes.back().gpus != gpus)
      shapes.push_back({0, n.cpus, gpus});
    ++shapes.back().count;
  }
  return shapes;
}

struct Completion {
  Time at;
  JobId job;
  Time started;  // tells a requeued job's old completion from its current one
  bool operator>(const Completion& o) const { return at != o.at ? at > o.at : job > o.job; }
};

// The replay drives the engine's Scheduler through the job lifecycle the Scheduler itself
// implements (StartJob, Requeue, SetFinished): this file only keeps the clock, the completions
// and the records.
class Replay {
 public:
  Replay(const trace::Trace& trace, JobIndex index, config::ClusterConfig cluster,
         const SimOptions& o, std::vector<engine::Window> windows)
      : trace_(trace), index_(std::move(index)), cluster_(std::move(cluster)), o_(o),
        windows_(std::move(windows)) {
    for (const engine::Node& n : cluster_.base.nodes) gpu_cluster_ |= !n.gpus.empty();
    for (const engine::Node& n : cluster_.base.nodes)
      result_.capacity_units += gpu_cluster_ ? static_cast<std::int64_t>(n.gpus.size()) : n.cpus;
    result_.unit_name = gpu_cluster_ ? "gpus" : "cpus";
    for (const engine::Node& n : cluster_.base.nodes)
      if (n.state == engine::NodeState::kUp) free_cpus_ += n.cpus;
    result_.node_shapes = NodeShapes(cluster_.base.nodes);
    result_.policy = o.policy_name;
    result_.skipped = trace.skipped;
  }

  SimResult Run() {
    const std::vector<trace::TraceJob>& jobs = trace_.jobs;
    assoc_.reserve(jobs.size());
    for (std::size_t p = 0; p < jobs.size(); ++p) {
      // A user often submits several jobs in a row: those skip the lookup by name.
      const bool same_as_previous = p > 0 && jobs[p].user == jobs[p - 1].user &&
                                    jobs[p].account == jobs[p - 1].account;
      assoc_.push_back(same_as_previous ? assoc_.back() : AssociationOf(jobs[p], cluster_));
    }
    queued_seq_.assign(jobs.size(), 0);
    // A record for every job, in id order; those of jobs that never ran are dropped at the end.
    result_.jobs.resize(jobs.size());
    ran_.assign(jobs.size(), false);
    result_.samples.reserve(2 * jobs.size() + 1);  // an event time per submission and end, at most
    // AssociationOf may have added associations: the scheduler starts from the final list.
    engine::Snapshot base = cluster_.base;
    base.pending.clear();
    base.running.clear();
    base.finished.clear();
    base.now = jobs.empty() ? 0 : jobs.front().submit;
    usage_.clear();
    for (const auto& a : base.associations) usage_.push_back(a.usage);
    sched_.emplace(std::move(base), o_.policy);
    if (!windows_.empty()) sched_->SetWindows(windows_);
    ProgressBar progress(o_.progress ? static_cast<std::int64_t>(jobs.size()) : 0);
    std::size_t next_submit = 0;
    while (true) {
      Time t = kInfiniteTime;
      if (next_submit < jobs.size()) t = jobs[next_submit].submit;
      if (!completions_.empty()) t = std::min(t, completions_.top().at);
      // A window that starts or ends while jobs wait changes what may start.
      if (!sched_->snapshot().pending.empty()) t = std::min(t, NextWindowChange());
      if (t == kInfiniteTime) break;
      Advance(t);
      bool freed = false;
      while (!completions_.empty() && completions_.top().at == t) {
        Completion c = completions_.top();
        completions_.pop();
        freed |= End(c);
      }
      while (next_submit < jobs.size() && jobs[next_submit].submit == t) Submit(next_submit++);
      // With every CPU taken and nothing freed, no job can start and none may be preempted:
      // the plan would change nothing, so the replay saves the call.
      if (freed || free_cpus_ > 0 || o_.policy.preempt != engine::PreemptType::kOff)
        PlanUntilStable();
      Sample();
      if (o_.progress) progress.Update(static_cast<std::int64_t>(ended_));
    }
    result_.never_started += static_cast<std::int64_t>(sched_->snapshot().pending.size());
    DropRecordsOfJobsThatNeverRan();
    return std::move(result_);
  }

 private:
  Time NextWindowChange() const {
    Time next = kInfiniteTime;
    for (const engine::Window& w : windows_) {
      if (w.start > now_) next = std::min(next, w.start);
      if (w.end > now_) next = std::min(next, w.end);
    }
    return next;
  }

  void Advance(Time t) {
    if (o_.policy.weights.fairshare > 0 && t > now_) {
      for (std::uint32_t a = 0; a < usage_.size(); ++a) {
        usage_[a] = engine::DecayUsage(usage_[a], t - now_, o_.fairshare_half_life);
        sched_->SetUsage(a, usage_[a]);
      }
    }
    now_ = t;
  }

  void Submit(std::size_t p) {
    queued_seq_[p] = next_seq_++;
    sched_->SetPending(ToEngineJob(trace_.jobs[p], cluster_, assoc_[p]));
  }

  // Ends a job; false when the completion is stale (the job was preempted since).
  bool End(const Completion& c) {
    const JobId id = c.job;
    const Job* running = sched_->Find(id);
    if (running == nullptr || running->allocation.nodes.empty()) return false;  // preempted
    const Job& job = *running;
    if (job.start_time != c.started) return false;  // an earlier run, requeued since
    const std::uint32_t position = index_.PositionOf(id);
    const trace::TraceJob& t = trace_.jobs[position];
    // Written in its place in id order, every field (a slot is written once: a job ends once).
    const std::uint32_t rank = index_.RankOf(position);
    JobRecord& rec = result_.jobs[rank];
    ran_[rank] = true;
    rec.id = id;
    rec.user = UserOf(t);
    rec.submit = job.submit_time;
    rec.start = job.start_time;
    rec.end = now_;
    rec.nodes = static_cast<std::int32_t>(job.allocation.nodes.size());
    std::int32_t gpus = 0, cpus = 0;
    for (const auto& a : job.allocation.nodes) {
      gpus += __builtin_popcountll(a.gpus);
      cpus += a.cpus;
    }
    rec.gpus = gpus;
    rec.cpus = cpus;
    rec.units = UnitsOf(job, job.allocation, gpu_cluster_);
    rec.recorded_wait = t.recorded_wait;
    rec.killed_at_limit = RunTimeOf(t) > job.req.time_limit;
    busy_units_ -= rec.units;
    free_cpus_ += rec.cpus;
    usage_[job.assoc] += static_cast<double>(rec.units) * static_cast<double>(rec.end - rec.start);
    if (o_.policy.weights.fairshare > 0) sched_->SetUsage(job.assoc, usage_[job.assoc]);
    if (o_.event_log) *o_.event_log << "t=" << now_ << " end job " << id << "\n";
    sched_->SetFinished(id, engine::Outcome::kCompleted);
    ++ended_;
    return true;
  }

  void PlanUntilStable() {
    // Preemptions free resources only once applied: plan again at the same moment, a bounded
    // number of times.
    for (int round = 0; round < 16 && !sched_->snapshot().pending.empty(); ++round) {
      auto t0 = std::chrono::steady_clock::now();
      engine::Plan plan = sched_->Plan(now_, engine::PlanDetail::kStarts);
      result_.scheduler_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ++result_.plan_calls;
      bool preempted = ApplyPreemptions(plan);
      ApplyStarts(plan);
      DropNeverRunnable(plan);
      if (!preempted) break;
    }
  }

  bool ApplyPreemptions(const engine::Plan& plan) {
    for (const engine::Preemption& p : plan.preemptions) {
      const Job* job = sched_->Find(p.victim);
      if (job == nullptr || job->allocation.nodes.empty()) continue;
      busy_units_ -= UnitsOf(*job, job->allocation, gpu_cluster_);
      for (const auto& a : job->allocation.nodes) free_cpus_ += a.cpus;
      if (o_.event_log)
        *o_.event_log << "t=" << now_ << " preempt job " << p.victim << " for job " << p.for_job
                      << (p.mode == engine::PreemptMode::kCancel ? " cancel" : " requeue") << "\n";
      if (p.mode == engine::PreemptMode::kCancel) {
        sched_->SetFinished(p.victim, engine::Outcome::kCancelled);
        ++ended_;
        ++result_.never_started;  // cancelled: it never completes
        continue;
      }
      sched_->Requeue(p.victim);
      queued_seq_[index_.PositionOf(p.victim)] = next_seq_++;
    }
    return !plan.preemptions.empty();
  }

  void ApplyStarts(const engine::Plan& plan) {
    if (plan.starts.empty()) return;
    // In the order the jobs joined the queue, so that logs list simultaneous starts alike
    // whatever order the plan gives them in.
    starts_.clear();
    for (const engine::Start& s : plan.starts) {
      const std::uint32_t position = index_.PositionOf(s.job);
      starts_.push_back({queued_seq_[position], position, &s});
    }
    std::sort(starts_.begin(), starts_.end(),
              [](const QueuedStart& a, const QueuedStart& b) { return a.seq < b.seq; });
    for (const QueuedStart& q : starts_) {
      const engine::Start* s = q.start;
      if (!sched_->StartJob(s->job, s->allocation)) continue;
      const Job& j = *sched_->Find(s->job);
      Seconds runs = std::min(RunTimeOf(trace_.jobs[q.position]), j.req.time_limit);
      completions_.push({now_ + runs, j.id, now_});
      busy_units_ += UnitsOf(j, j.allocation, gpu_cluster_);
      for (const auto& a : j.allocation.nodes) free_cpus_ -= a.cpus;
      if (o_.event_log) LogStart(j);
    }
  }

  void LogStart(const Job& j) {
    std::vector<std::string> names;
    std::string gpus;
    for (const auto& a : j.allocation.nodes) {
      names.push_back(sched_->snapshot().nodes[a.node].name);
      for (int d = 0; d < 64; ++d)
        if (a.gpus >> d & 1) gpus += (gpus.empty() ? "" : ",") + std::to_string(d);
    }
    *o_.event_log << "t=" << now_ << " start job " << j.id << " on " << CompressHostlist(names)
                  << (gpus.empty() ? "" : " gpus " + gpus) << "\n";
  }

  void DropRecordsOfJobsThatNeverRan() {
    std::size_t kept = 0;
    for (std::size_t k = 0; k < result_.jobs.size(); ++k) {
      if (!ran_[k]) continue;
      if (kept != k) result_.jobs[kept] = std::move(result_.jobs[k]);
      ++kept;
    }
    result_.jobs.resize(kept);
  }

  void DropNeverRunnable(const engine::Plan& plan) {
    for (const engine::Pending& p : plan.pending) {
      if (!NeverRuns(p.reason)) continue;
      sched_->Remove(p.job);
      ++result_.never_started;
      ++ended_;
    }
  }

  void Sample() {
    const engine::Snapshot& s = sched_->snapshot();
    result_.samples.push_back({now_, busy_units_, static_cast<std::int64_t>(s.pending.size()),
                               static_cast<std::int64_t>(s.running.size())});
  }

  // A start of a plan with when its job last joined the queue, the order they are applied in.
  struct QueuedStart {
    std::uint64_t seq;
    std::uint32_t position;
    const engine::Start* start;
  };

  const trace::Trace& trace_;
  const JobIndex index_;  // job id -> position in trace_.jobs, which the vectors below share
  config::ClusterConfig cluster_;
  const SimOptions& o_;
  const std::vector<engine::Window> windows_;  // the reservations' (SimOptions::reservations)
  std::optional<engine::Scheduler> sched_;
  Time now_ = 0;
  std::vector<double> usage_;  // fair-share usage per association, decayed as time passes
  std::vector<std::uint32_t> assoc_;       // by position: the association it is charged to
  std::vector<std::uint64_t> queued_seq_;  // by position: when it last joined the queue
  std::vector<bool> ran_;                  // by rank in id order: result_.jobs has its record
  std::vector<QueuedStart> starts_;        // ApplyStarts' scratch, kept to reuse its memory
  std::uint64_t next_seq_ = 0;
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> completions_;
  SimResult result_;
  std::int64_t busy_units_ = 0;
  std::int64_t free_cpus_ = 0;  // over up nodes
  std::size_t ended_ = 0;
  bool gpu_cluster_ = false;
};

}  // namespace

// The reservations' windows, checked as lockstepd checks them; `start`: the replay's "now".
Result<std::vector<engine::Window>> WindowsOf(const std::vector<std::vector<std::string>>& all,
                                              const config::ClusterConfig& cluster, Time start) {
  reservation::ClusterFacts facts;
  for (const engine::Node& n : cluster.base.nodes) facts.node_names.push_back(n.name);
  facts.node_usable.assign(facts.node_names.size(), true);
  facts.busy_until.assign(facts.node_names.size(), 0);
  for (const engine::Partition& p : cluster.base.partitions) {
    facts.partition_names.push_back(p.name);
    facts.partition_nodes.push_back(p.nodes);
  }
  facts.default_partition = cluster.default_partition;
  reservation::ReservationBook book;
  for (std::size_t i = 0; i < all.size(); ++i) {
    Result<std::string> made = book.Create(all[i], facts, start);
    if (!made.ok())
      return InvalidArgument("reservation " + std::to_string(i + 1) + ": " + made.status().message());
  }
  return book.Windows(start, facts.node_names);
}

Result<SimResult> Simulate(const trace::Trace& trace, config::ClusterConfig cluster,
                           const SimOptions& options) {
  if (cluster.base.nodes.empty()) return InvalidArgument("the cluster has no nodes");
  Result<JobIndex> index = JobIndex::Build(trace.jobs);
  if (!index.ok()) return index.status();
  const Time start = trace.jobs.empty() ? 0 : trace.jobs.front().submit;
  Result<std::vector<engine::Window>> windows = WindowsOf(options.reservations, cluster, start);
  if (!windows.ok()) return windows.status();
  return Replay(trace, std::move(*index), std::move(cluster), options, std::move(*windows)).Run();
}

Result<config::ClusterConfig> ClusterFromTrace(const trace::Trace& trace) {
  if (trace.nodes.empty())
    return InvalidArgument("the trace does not say what cluster it ran on: give --cluster FILE");
  const trace::TraceNode& first = trace.nodes.front();
  bool homogeneous =
      std::all_of(trace.nodes.begin(), trace.nodes.end(), [&](const trace::TraceNode& n) {
        return n.cpus == first.cpus && n.mem_mb == first.mem_mb && n.gpus == first.gpus &&
               n.gpu_type == first.gpu_type;
      });
  config::ClusterConfig c =
      config::HomogeneousCluster(static_cast<int>(trace.nodes.size()), std::max(1, first.cpus),
                               first.mem_mb, first.gpus, first.gpu_type);
  if (homogeneous) return c;
  // Heterogeneous (the Alibaba node list): one node each, with its own GPU model.
  for (std::size_t i = 0; i < trace.nodes.size(); ++i) {
    const trace::TraceNode& t = trace.nodes[i];
    engine::Node& n = c.base.nodes[i];
    n.name = t.name;
    n.cpus = std::max(1, t.cpus);
    n.mem_mb = t.mem_mb;
    n.gpus.clear();
    std::uint32_t type = engine::kNone;
    if (t.gpus > 0) {
      type = c.GpuTypeIndex(t.gpu_type.empty() ? "gpu" : t.gpu_type);
      if (type == engine::kNone) {
        c.base.gpu_types.push_back(t.gpu_type.empty() ? "gpu" : t.gpu_type);
        type = static_cast<std::uint32_t>(c.base.gpu_types.size() - 1);
      }
    }
    for (int g = 0; g < t.gpus && g < engine::kMaxDevicesPerNode; ++g)
      n.gpus.push_back({static_cast<std::uint16_t>(g), type, -1, ""});
  }
  return c;
}

}  // namespace lockstep::sim
