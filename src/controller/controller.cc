// Start-up, recovery, ownership checks and the scheduling loop.
#include "common/log.h"
#include "controller/controller.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "controller/controller_internal.h"
#include "controller/job_convert.h"
#include "controller/job_env.h"
#include "engine/request.h"

namespace lockstep::controller {

std::string CompressCounts(const std::vector<std::int32_t>& counts) {
  std::string out;
  for (std::size_t i = 0; i < counts.size();) {
    std::size_t k = i;
    while (k < counts.size() && counts[k] == counts[i]) ++k;
    if (!out.empty()) out += ',';
    out += std::to_string(counts[i]);
    if (k - i > 1) out += "(x" + std::to_string(k - i) + ")";
    i = k;
  }
  return out;
}

Controller::Controller(const ControllerOptions& options)
    : options_(options), clock_(*options.clock) {}

Result<std::unique_ptr<Controller>> Controller::Start(const ControllerOptions& options) {
  std::unique_ptr<Controller> c(new Controller(options));
  Result<config::ClusterConfig> cluster =
      config::LoadClusterConfig(options.cluster_config, options.backend);
  if (!cluster.ok()) return cluster.status();
  c->cluster_ = std::move(*cluster);
  c->nodes_.resize(c->cluster_.base.nodes.size());
  for (std::size_t n = 0; n < c->nodes_.size(); ++n) {
    const engine::Node& node = c->cluster_.base.nodes[n];
    c->nodes_[n].admin = node.state;
    c->nodes_[n].reason = node.reason;
  }
  ::mkdir(options.state_dir.c_str(), 0711);  // the store makes an existing one private too
  store::StoreOptions so;
  so.path = options.state_dir + "/lockstepd.db";
  Result<std::unique_ptr<store::Store>> st = store::Store::Open(so);
  if (!st.ok()) return st.status();
  c->store_ = std::move(*st);
  LOCKSTEP_RETURN_IF_ERROR(c->Recover());
  Controller* raw = c.get();
  c->events_thread_ = std::thread([raw] { raw->EventLoop(); });
  c->dispatcher_ = std::thread([raw] { raw->DispatchLoop(); });
  c->scheduler_ = std::thread([raw] { raw->ScheduleLoop(); });
  c->step_waits_ = std::thread([raw] { raw->StepWaitLoop(); });
  return c;
}

Controller::~Controller() {
  {
    std::lock_guard<std::mutex> lock(events_mu_);
    events_stopping_ = true;
  }
  events_changed_.notify_all();
  if (events_thread_.joinable()) events_thread_.join();
  {
    HeldLock lock(*this);
    stopping_ = true;
  }
  wake_scheduler_.notify_all();
  outbox_changed_.notify_all();
  step_output_changed_.notify_all();
  if (scheduler_.joinable()) scheduler_.join();
  if (dispatcher_.joinable()) dispatcher_.join();
  if (step_waits_.joinable()) step_waits_.join();  // it answers every waiter first
}

Status Controller::Recover() {
  Result<std::vector<store::Record>> arrays = store_->Scan("array_specs");
  if (!arrays.ok()) return arrays.status();
  Result<std::vector<store::Record>> records = store_->Scan("jobs");
  if (!records.ok()) return records.status();
  HeldLock lock(*this);
  options_.check_snapshot = options_.check_snapshot || std::getenv("LOCKSTEP_CHECK_SNAPSHOT");
  for (const store::Record& r : *arrays) {
    Result<jobspec::JobSpec> spec = jobspec::JobSpecFromJson(r.value);
    if (!spec.ok()) return Internal("store: array spec " + r.key + ": " + spec.status().message());
    array_specs_[std::stoull(r.key)] = specs_.Intern(std::move(*spec));
  }
  for (const store::Record& r : *records) {
    Result<JobEntry> e = EntryFromJson(r.value);
    if (!e.ok()) return Internal("store: job " + r.key + ": " + e.status().message());
    JobId id = e->id;
    if (!e->spec) {
      auto array = array_specs_.find(e->array_job_id);
      if (array == array_specs_.end())
        return Internal("store: job " + r.key + ": its array's spec is missing");
      e->spec = array->second;  // interned already, and shared by every such task
    } else {
      e->spec = specs_.Intern(*e->spec);
    }
    next_job_id_ = std::max(next_job_id_, id + 1);
    if (e->state == JobState::kRunning || e->state == JobState::kCompleting) active_.insert(id);
    jobs_.emplace(id, std::move(*e));
  }
  // Stores written before ids were given out in memory kept a counter: never go below it.
  Result<std::uint64_t> counter = store_->AllocateIds("job_id", 1);
  if (!counter.ok()) return counter.status();
  next_job_id_ = std::max<JobId>(next_job_id_, *counter);
  Result<std::vector<store::Record>> nodes = store_->Scan("nodes");
  if (!nodes.ok()) return nodes.status();
  for (const store::Record& r : *nodes) {
    nlohmann::json j = nlohmann::json::parse(r.value, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return Internal("store: node " + r.key + ": not JSON");
    NodeInfo info;
    info.admin = static_cast<engine::NodeState>(j.value("admin", 0));
    info.reason = j.value("reason", "");
    info.reason_user = j.value("reason_user", "");
    info.reason_time = j.value("reason_time", Time{0});
    std::uint32_t n = NodeIndexLocked(r.key);
    // A node a backend has yet to report (Kubernetes) takes its drain when it joins.
    if (n == engine::kNone)
      operator_states_[r.key] = std::move(info);
    else
      nodes_[n] = std::move(info);
  }
  // Running jobs keep running on their nodes: they are adopted when the backend reports what
  // runs there (RunsAlive), or requeued (NODE_FAIL when they may not be) when it does not.
  return Status::Ok();
}

bool Controller::IsOperator(std::uint32_t uid) const {
  return uid == 0 || std::find(options_.operators.begin(), options_.operators.end(), uid) !=
                         options_.operators.end();
}

Status Controller::CheckOwner(const Caller& caller, const JobEntry& job) const {
  if (caller.uid == job.uid || IsOperator(caller.uid)) return Status::Ok();
  return PermissionDenied("access/permission denied: job " + job.DisplayId() + " belongs to " +
                          job.user);
}

Result<JobEntry*> Controller::FindLocked(JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return NotFound("invalid job id specified: " + std::to_string(id));
  return &it->second;
}

std::uint32_t Controller::NodeIndexLocked(const std::string& name) const {
  return cluster_.NodeIndex(name);
}

void Controller::RequestPassLocked() {
  pass_requested_ = true;
  ++pass_requests_;
  wake_scheduler_.notify_one();
}

JobEnvInput Controller::EnvInputLocked(const JobEntry& job) const {
  // MASTER_ADDR: the address the first node's backend reported.
  return MakeJobEnvInput(job, cluster_, [this](const std::string& node) {
    std::uint32_t n = NodeIndexLocked(node);
    return n == engine::kNone || nodes_[n].address.empty() ? std::string("127.0.0.1")
                                                           : nodes_[n].address;
  });
}

nlohmann::json Controller::Diagnostics() const {
  return {{"lock_hold", lock_stats_.ToJson()}};
}

void Controller::ScheduleLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    wake_scheduler_.wait_for(lock, options_.periodic_pass,
                             [this] { return stopping_ || pass_requested_; });
    if (stopping_) break;
    std::optional<HeldSpan> held(std::in_place, lock_stats_);
    if (pass_requested_ && options_.schedule_delay.count() > 0) {
      // Let a burst of submissions arrive before planning once for all of them.
      held.reset();
      lock.unlock();
      std::this_thread::sleep_for(options_.schedule_delay);
      lock.lock();
      held.emplace(lock_stats_);
    }
    pass_requested_ = false;
    const std::uint64_t covers = pass_requests_;  // every request so far is served by this pass
    Time now = clock_.Now();
    EnforceLimitsLocked(now);
    if (ReplayChangesLocked(now)) {
      engine::PolicyOptions policy = cluster_.policy;
      held.reset();
      lock.unlock();
      engine::Plan plan = engine::plan(sched_->snapshot(), policy);
      lock.lock();
      held.emplace(lock_stats_);
      if (stopping_) break;
      ApplyPlanLocked(plan, now);
    }
    passes_covering_ = covers;
    pass_done_.notify_all();
  }
}

void Controller::PassForTest() {
  SettleForTest();
  std::unique_lock<std::mutex> lock(mu_);
  RequestPassLocked();
  const std::uint64_t mine = pass_requests_;
  pass_done_.wait(lock, [&] { return passes_covering_ >= mine || stopping_; });
  lock.unlock();
  SettleForTest();
}

void Controller::TouchLocked(const JobEntry& job) {
  dirty_.insert(job.id);
  if (job.state == JobState::kRunning || job.state == JobState::kCompleting)
    active_.insert(job.id);
  else
    active_.erase(job.id);
}

engine::Job Controller::RunningEngineJobLocked(const JobEntry& e) {
  engine::Job j = ToEngineJob(e, cluster_);
  for (const PlacedNode& p : e.placement) {
    std::uint32_t n = NodeIndexLocked(p.node);
    if (n != engine::kNone)
      j.allocation.nodes.push_back({n, p.cpus, p.mem_mb, p.gpus, __builtin_popcountll(p.gpus)});
  }
  return j;
}

namespace {

engine::Outcome OutcomeOf(JobState s) {
  return s == JobState::kCompleted   ? engine::Outcome::kCompleted
         : s == JobState::kCancelled ? engine::Outcome::kCancelled
                                     : engine::Outcome::kFailed;
}

}  // namespace

void Controller::PlaceJobLocked(const JobEntry& e, IncrementalSnapshot& s) {
  if (e.state == JobState::kPending)
    s.SetPending(ToEngineJob(e, cluster_));
  else if (e.state == JobState::kRunning || e.state == JobState::kCompleting)
    s.SetRunning(RunningEngineJobLocked(e));
  else
    s.SetFinished(e.id, OutcomeOf(e.state));
}

engine::Snapshot Controller::BuildSnapshotLocked() {
  IncrementalSnapshot full(cluster_.base);
  for (const auto& [id, e] : jobs_) PlaceJobLocked(e, full);
  return full.snapshot();
}

bool Controller::ReplayChangesLocked(Time now) {
  if (!sched_) {
    sched_ = std::make_unique<IncrementalSnapshot>(cluster_.base);
    for (const auto& [id, e] : jobs_) dirty_.insert(id);
  }
  // Nodes joined or changed (a backend's): running jobs name nodes by name, and one that named
  // a node not known at their last replay (lockstepd restarting before the backend reported
  // its nodes) must be replayed with its allocation now.
  if (cluster_changed_) dirty_.insert(active_.begin(), active_.end());
  for (JobId id : dirty_) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) {
      sched_->Remove(id);
      continue;
    }
    PlaceJobLocked(it->second, *sched_);
  }
  dirty_.clear();
  engine::Snapshot& s = sched_->cluster();
  s.now = now;
  if (cluster_changed_) {
    // Nodes found or resized by the backend: everything but the jobs comes from the cluster.
    s.nodes = cluster_.base.nodes;
    s.partitions = cluster_.base.partitions;
    s.switches = cluster_.base.switches;
    s.blocks = cluster_.base.blocks;
    s.gpu_types = cluster_.base.gpu_types;
    s.features = cluster_.base.features;
    cluster_changed_ = false;
  }
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    const NodeInfo& info = nodes_[n];
    engine::NodeState state = info.admin;
    if (info.cordoned && state == engine::NodeState::kUp) state = engine::NodeState::kDrain;
    s.nodes[n].state = !info.responding ? engine::NodeState::kDown : state;
  }
  s.associations = cluster_.base.associations;  // ToEngineJob may have added some
  if (options_.check_snapshot) {
    std::vector<std::string> want = IncrementalSnapshot::Describe(BuildSnapshotLocked());
    std::vector<std::string> have = IncrementalSnapshot::Describe(s);
    if (want != have) {
      std::size_t i = 0;
      while (i < want.size() && i < have.size() && want[i] == have[i]) ++i;
      log::Error(
          "the incremental snapshot differs from a full one at line {}: full: {}; incremental: {}",
          i, i < want.size() ? want[i] : "(end)", i < have.size() ? have[i] : "(end)");
      std::abort();
    }
  }
  return !s.pending.empty();
}

void Controller::ApplyPlanLocked(engine::Plan& plan, Time now) {
  // The plan was made from the jobs as they were at the replay. A job touched since (held,
  // cancelled, changed) and a node that went down or was drained since are left to the next
  // pass, which sees them as they are now.
  auto unchanged = [&](JobId id, JobState want) -> JobEntry* {
    if (dirty_.count(id)) return nullptr;
    auto it = jobs_.find(id);
    return it != jobs_.end() && it->second.state == want ? &it->second : nullptr;
  };
  auto nodes_usable = [&](const engine::Allocation& a) {
    return std::all_of(a.nodes.begin(), a.nodes.end(), [&](const engine::NodeAllocation& n) {
      const NodeInfo& info = nodes_[n.node];
      return info.responding && !info.cordoned && info.admin == engine::NodeState::kUp;
    });
  };
  for (const engine::Preemption& p : plan.preemptions) {
    JobEntry* victim = unchanged(p.victim, JobState::kRunning);
    if (!victim) continue;
    if (p.mode == engine::PreemptMode::kCancel) victim->cancel_requested = true;
    victim->reason = "Preempted";
    PersistLocked({victim});
    TerminateLocked(*victim);
  }
  for (const engine::Start& st : plan.starts) {
    JobEntry* e = unchanged(st.job, JobState::kPending);
    // Nodes resized since the replay (others' pods took room): the plan may no longer fit.
    if (!e || cluster_changed_ || !nodes_usable(st.allocation)) {
      RequestPassLocked();
      continue;
    }
    StartJobLocked(*e, st.allocation, now);
  }
  last_pending_.clear();
  for (engine::Pending& p : plan.pending) {
    auto it = jobs_.find(p.job);
    // A job changed since the replay (held, released, updated) keeps the reason it was given.
    if (it == jobs_.end() || it->second.state != JobState::kPending || dirty_.count(p.job))
      continue;
    it->second.reason = engine::PendingReasonName(p.reason);
    it->second.expected_start = p.expected_start;
    if (p.reserved || !p.blocked_by.empty()) last_pending_[p.job] = std::move(p);
  }
  for (const auto& [id, b] : plan.priorities) {
    auto found = jobs_.find(id);
    if (found != jobs_.end()) found->second.priority = b.total;
  }
  last_priorities_ = std::move(plan.priorities);
}

void Controller::EnforceLimitsLocked(Time now) {
  for (JobId id : std::vector<JobId>(active_.begin(), active_.end())) {
    JobEntry& e = jobs_.at(id);
    if (e.state != JobState::kRunning || e.timed_out) continue;
    engine::Job j = ToEngineJob(e, cluster_);
    const engine::Partition& part = cluster_.base.partitions[j.partition];
    Seconds limit = engine::ShapeOf(j, part).duration;
    if (limit >= kUnlimited || now < e.start_time + limit) continue;
    e.timed_out = true;
    e.reason = "TimeLimit";
    PersistLocked({&e});
    TerminateLocked(e);
  }
}

}  // namespace lockstep::controller
