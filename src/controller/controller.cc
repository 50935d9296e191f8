// Start-up, recovery, ownership checks and the scheduling loop.
#include "common/log.h"
#include "controller/controller.h"

#include <malloc.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "controller/controller_internal.h"
#include "controller/health_book.h"
#include "controller/job_convert.h"
#include "controller/job_env.h"
#include "controller/snapshot_text.h"
#include "engine/plan_checker.h"
#include "engine/scheduler.h"
#include "engine/request.h"
#include "store/store_mode.h"

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
    : options_(options),
      clock_(*options.clock),
      health_(std::make_unique<HealthBook>()),
      stats_(options.clock->Now()),
      event_log_(options.event_log_capacity) {}

Result<std::unique_ptr<Controller>> Controller::Start(const ControllerOptions& options) {
  std::unique_ptr<Controller> c(new Controller(options));
  Result<config::ClusterConfig> cluster =
      config::LoadClusterConfig(options.cluster_config, options.backend);
  if (!cluster.ok()) return cluster.status();
  c->cluster_ = std::move(*cluster);
  c->submit_limits_ = c->cluster_.submit_limits;
  c->nodes_.resize(c->cluster_.base.nodes.size());
  for (std::size_t n = 0; n < c->nodes_.size(); ++n) {
    const engine::Node& node = c->cluster_.base.nodes[n];
    c->nodes_[n].admin = node.state;
    c->nodes_[n].reason = node.reason;
  }
  ::mkdir(options.state_dir.c_str(), 0711);  // the store makes an existing one private too
  store::StoreOptions so;
  so.path = options.state_dir + "/lockstepd.db";
  so.fence = options.write_fence;
  const bool flag = !options.store_mode.empty();
  Result<store::StoreMode> mode = store::ResolveStoreMode(
      flag ? options.store_mode : c->cluster_.store_mode, options.state_dir,
      flag ? "--store-mode" : options.cluster_config + ": store_mode");
  if (!mode.ok()) return mode.status();
  so.mode = *mode;
  log::Info("store {} in {} mode", so.path, store::StoreModeName(so.mode));
  Result<std::unique_ptr<store::Store>> st = store::Store::Open(so);
  if (!st.ok()) return st.status();
  c->store_ = std::move(*st);
  LOCKSTEP_RETURN_IF_ERROR(c->ReplayAccountsChanges());  // sacctmgr's, over the YAML
  LOCKSTEP_RETURN_IF_ERROR(c->ReplayPartitionChanges());  // scontrol update PartitionName=
  LOCKSTEP_RETURN_IF_ERROR(c->LoadReservations());
  LOCKSTEP_RETURN_IF_ERROR(c->RecoverUsage());
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
  Result<std::vector<store::Record>> pending_arrays = store_->Scan("pending_arrays");
  if (!pending_arrays.ok()) return pending_arrays.status();
  HeldLock lock(*this);
  options_.check_snapshot = options_.check_snapshot || std::getenv("LOCKSTEP_CHECK_SNAPSHOT");
  for (const store::Record& r : *arrays) {
    Result<jobspec::JobSpec> spec = jobspec::JobSpecFromJson(r.value);
    if (!spec.ok()) return Internal("store: array spec " + r.key + ": " + spec.status().message());
    if (spec->array) DropArrayIndices(*spec->array);  // as SubmitAs
    array_specs_[std::stoull(r.key)] = specs_.Intern(std::move(*spec));
  }
  // Page by page (read under the lock: no other thread runs yet): a store of millions of old
  // jobs is never in memory at once, and only what MinJobAge keeps is loaded.
  constexpr std::size_t kPage = 4096;
  for (std::string from;;) {
    Result<std::vector<store::Record>> page =
        store_->ScanPage("jobs", {.from = from, .limit = kPage});
    if (!page.ok()) return page.status();
    for (const store::Record& r : *page) LOCKSTEP_RETURN_IF_ERROR(RecoverJobLocked(r));
    if (page->size() < kPage) break;
    from = page->back().key + '\x01';
  }
  std::sort(finished_order_.begin(), finished_order_.end());
  LOCKSTEP_RETURN_IF_ERROR(RecoverPendingArraysLocked(*pending_arrays));
  LOCKSTEP_RETURN_IF_ERROR(RecoverPurgedTargetsLocked());
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
    info.health_drain = j.value("health_drain", false);
    info.health_event = j.value("health_event", false);
    std::uint32_t n = NodeIndexLocked(r.key);
    // A node a backend has yet to report (Kubernetes) takes its drain when it joins.
    if (n == engine::kNone)
      operator_states_[r.key] = std::move(info);
    else
      nodes_[n] = std::move(info);
  }
  LOCKSTEP_RETURN_IF_ERROR(LoadHealthLocked());
  // Running jobs keep running on their nodes: they are adopted when the backend reports what
  // runs there (RunsAlive), or requeued (NODE_FAIL when they may not be) when it does not.
  return Status::Ok();
}

Status Controller::RecoverJobLocked(const store::Record& r) {
  Result<JobRecordHead> head = HeadFromJson(r.value);
  if (!head.ok()) return Internal("store: job " + r.key + ": " + head.status().message());
  // Ids are never given again, purged jobs' included: they stay in the store.
  next_job_id_ = std::max(next_job_id_, head->id + 1);
  if (IsFinished(head->state) && clock_.Now() - head->end_time > cluster_.policy.min_job_age)
    return Status::Ok();  // purged: sacct and dependencies read it from the store
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
  if (HoldsAllocation(e->state)) active_.insert(id);
  tally_.Touch(id);
  NoteForPurgeLocked(jobs_.emplace(id, std::move(*e)).first->second);
  return Status::Ok();
}

Status Controller::RecoverPurgedTargetsLocked() {
  for (JobId id : AwaitedTargetsLocked()) {
    if (jobs_.count(id)) continue;
    Result<std::optional<JobEntry>> stored = StoredJob(id);
    if (!stored.ok()) return stored.status();
    if (stored->has_value() && IsFinished((*stored)->state)) purged_targets_[id] = (*stored)->state;
  }
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
  if (it != jobs_.end()) return &it->second;
  // A task still in its array's record is split off to be acted on (controller_arrays.cc).
  if (PendingArray* a = PendingArrayOfLocked(id)) return &SplitTaskLocked(*a, id);
  return NotFound("invalid job id specified: " + std::to_string(id));
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
  auto address_of = [this](const std::string& node) {
    std::uint32_t n = NodeIndexLocked(node);
    return n == engine::kNone || nodes_[n].address.empty() ? std::string("127.0.0.1")
                                                           : nodes_[n].address;
  };
  JobEnvInput in = MakeJobEnvInput(job, cluster_, address_of);
  if (job.is_het_component()) {
    for (JobId id = job.het_job_id; id < job.het_job_id + job.het_size; ++id)
      if (auto it = jobs_.find(id); it != jobs_.end())
        in.het_components.push_back(MakeJobEnvInput(it->second, cluster_, address_of));
  }
  return in;
}

nlohmann::json Controller::Diagnostics() const {
  return {{"lock_hold", lock_stats_.ToJson()}};
}

// Jobs forgotten by the MinJobAge purge before lockstepd hands its free memory back.
constexpr std::size_t kForgottenBeforeTrim = 1000;

void Controller::ScheduleLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  std::size_t forgotten = 0;  // since memory was last handed back
  while (!stopping_) {
    const bool requested = wake_scheduler_.wait_for(
        lock, options_.periodic_pass, [this] { return stopping_ || pass_requested_; });
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
    // A pass on events decides (starts, reservations, preemptions); the periodic pass, and one
    // at least every periodic_pass under a stream of events, also says why each job pends,
    // when it should start and its priority: Slurm's quick scheduler on events and its
    // backfill cycle. With 100,000 pending jobs the full record is most of a pass.
    const auto period = std::chrono::duration_cast<std::chrono::seconds>(options_.periodic_pass);
    const bool full = !requested || full_pass_requested_ || now - last_full_pass_ >= period.count();
    full_pass_requested_ = false;
    if (full) last_full_pass_ = now;
    SendWarningSignalsLocked(now);
    EnforceLimitsLocked(now);
    AccrueUsageLocked(now);
    const std::size_t known = jobs_.size();
    PurgeFinishedJobsLocked(now);
    forgotten += known - jobs_.size();  // only the purge removes jobs
    AdvanceReservationsLocked(now);
    if (ReplayChangesLocked(now)) {
      if (!PassLocked(lock, held, now, full ? engine::PlanDetail::kFull
                                            : engine::PlanDetail::kDecisions))
        break;
    }
    passes_covering_ = covers;
    pass_done_.notify_all();
    if (forgotten >= kForgottenBeforeTrim) {
      // glibc keeps the freed records' pages (in every thread's arena) unless asked: without
      // this, memory stays at the peak of the largest burst of jobs ever held. Out of the lock:
      // it walks the heaps.
      forgotten = 0;
      held.reset();
      lock.unlock();
      malloc_trim(0);
      lock.lock();
    }
  }
}

bool Controller::PassLocked(std::unique_lock<std::mutex>& lock, std::optional<HeldSpan>& held,
                            Time now, engine::PlanDetail detail) {
  auto unlocked = [&](auto work) {
    held.reset();
    lock.unlock();
    work();
    lock.lock();
    held.emplace(lock_stats_);
    return !stopping_;
  };
  engine::Plan plan;
  PendingViews views;
  bool go_on = unlocked([&] {
    const auto started = std::chrono::steady_clock::now();
    plan = sched_->Plan(now, detail);
    RecordPassStats(plan, detail, std::chrono::steady_clock::now() - started, now);
    if (check_reference_) CheckSchedulerPlan(plan, detail);
    views = ChangedPendingViews(plan, detail);
  });
  if (!go_on) return false;
  ApplyPlanLocked(plan, now);
  // The starts are made: let requests see them before the pending jobs' views change.
  if (!unlocked([] {})) return false;
  PublishPendingViewsLocked(std::move(views), std::move(plan.priorities));
  return true;
}

void Controller::PassForTest() {
  SettleForTest();
  std::unique_lock<std::mutex> lock(mu_);
  RequestPassLocked();
  full_pass_requested_ = true;  // tests read reasons and priorities after it
  const std::uint64_t mine = pass_requests_;
  pass_done_.wait(lock, [&] { return passes_covering_ >= mine || stopping_; });
  lock.unlock();
  SettleForTest();
}

void Controller::TouchLocked(const JobEntry& job) {
  dirty_.insert(job.id);
  tally_.Touch(job.id);
  NoteForPurgeLocked(job);
  if (HoldsAllocation(job.state))
    active_.insert(job.id);
  else
    active_.erase(job.id);
}

engine::Job Controller::RunningEngineJobLocked(const JobEntry& e) {
  engine::Job j = ToEngineJob(e, cluster_);
  // Slurm adds the time a job spent suspended to its end; the engine, which ends running jobs
  // at start + limit, is told a limit longer by that much (as scontrol update TimeLimit= would).
  if (e.suspended_seconds > 0) {
    const Seconds limit = engine::ShapeOf(j, cluster_.base.partitions[j.partition]).duration;
    if (limit < kUnlimited) j.req.time_limit = limit + e.suspended_seconds;
  }
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

void Controller::PlaceJobLocked(const JobEntry& e, engine::Scheduler& s) {
  if (e.state == JobState::kPending) {
    engine::Job job = PendingEngineJobLocked(e);
    // Every ended target the job's dependencies name, as the controller knows it: the
    // scheduler forgets finished jobs after MinJobAge, and the controller keeps the final state
    // of those it purged while a pending job names them (controller_purge.cc).
    for (const engine::Dependency& d : job.dependencies) {
      if (d.kind == engine::DependencyKind::kSingleton) continue;
      if (std::optional<JobState> ended = EndedTargetLocked(d.target)) {
        auto target = jobs_.find(d.target);  // purged: its time is long past
        s.SetFinished(d.target, OutcomeOf(*ended),
                      target == jobs_.end() ? 0 : DependencySince(target->second));
      }
    }
    s.SetPending(std::move(job));
  } else if (HoldsAllocation(e.state)) {
    s.SetRunning(RunningEngineJobLocked(e));
  } else {
    s.SetFinished(e.id, OutcomeOf(e.state), DependencySince(e));
  }
}

engine::NodeState Controller::SchedulingStateLocked(std::uint32_t node) const {
  const NodeInfo& info = nodes_[node];
  if (!info.responding) return engine::NodeState::kDown;
  if (info.cordoned && info.admin == engine::NodeState::kUp) return engine::NodeState::kDrain;
  return info.admin;
}

engine::Snapshot Controller::BuildSnapshotLocked(Time now) {
  engine::Snapshot s = cluster_.base;
  for (auto& [id, e] : jobs_) {
    if (e.state == JobState::kPending)
      s.pending.push_back(PendingEngineJobLocked(e));
    else if (HoldsAllocation(e.state))
      s.running.push_back(RunningEngineJobLocked(e));
    else
      s.finished.push_back({id, OutcomeOf(e.state), DependencySince(e)});
  }
  for (const auto& [id, state] : purged_targets_) s.finished.push_back({id, OutcomeOf(state)});
  s.associations = cluster_.base.associations;  // ToEngineJob may have added some
  s.accounts = cluster_.base.accounts;
  for (std::uint32_t n = 0; n < nodes_.size(); ++n) s.nodes[n].state = SchedulingStateLocked(n);
  std::vector<std::string> names;
  for (const engine::Node& n : s.nodes) names.push_back(n.name);
  s.windows = reservations_.Windows(now, names);
  s.now = now;
  return s;
}

void Controller::NewSchedulerLocked() {
  sched_ = std::make_unique<engine::Scheduler>(cluster_.base, cluster_.policy);  // base: no jobs
  for (const auto& [id, e] : jobs_) dirty_.insert(id);
}

bool Controller::ReplayChangesLocked(Time now) {
  if (!sched_ || limits_changed_) {  // sacctmgr changed QoS, accounts or associations
    limits_changed_ = false;
    NewSchedulerLocked();
    windows_changed_ = true;
  } else if (cluster_changed_) {
    windows_changed_ = true;  // a reservation may name a node that has just joined
    // Nodes joined or changed (a backend's; nodes are only ever added, so indices hold): the
    // scheduler takes the cluster anew, and running jobs are replayed, since one that named a
    // node not known at its last replay must now be placed with its allocation.
    sched_->SetCluster(cluster_.base);
    dirty_.insert(active_.begin(), active_.end());
  }
  cluster_changed_ = false;
  SyncWindowsLocked(now);  // before the replay: it marks the jobs whose window id changed
  SplitArrayWindowsLocked();
  // The metrics' job counts follow the same changes (every TouchLocked marks both).
  const JobTally::Lookup tally_lookup = TallyLookupLocked();
  for (JobId id : dirty_) {
    shown_.erase(id);  // what the next pass says of it is published whether it changed or not
    auto it = jobs_.find(id);
    tally_.Count(id, it == jobs_.end() ? nullptr : &it->second, tally_lookup);
    if (it == jobs_.end()) {
      // Purged while a pending job waits for it: the scheduler keeps its outcome.
      if (auto kept = purged_targets_.find(id); kept != purged_targets_.end())
        sched_->SetFinished(id, OutcomeOf(kept->second));
      else
        sched_->Remove(id);
      continue;
    }
    PlaceJobLocked(it->second, *sched_);
  }
  dirty_.clear();
  tally_.ForgetChanges();
  // Users and accounts seen for the first time (ToEngineJob adds them): rare, and a rebuild of
  // the scheduler's state.
  const engine::Snapshot& known = sched_->snapshot();
  if (cluster_.base.accounts.size() != known.accounts.size() ||
      cluster_.base.associations.size() != known.associations.size()) {
    sched_->SetLimits(cluster_.base.partitions, cluster_.base.qos, cluster_.base.accounts,
                      cluster_.base.associations);
  }
  for (std::uint32_t n = 0; n < nodes_.size(); ++n) {
    engine::NodeState state = SchedulingStateLocked(n);
    if (state != sched_->snapshot().nodes[n].state) sched_->SetNodeState(n, state);
  }
  if (options_.check_snapshot) CheckSchedulerJobsLocked(now);
  replayed_jobs_ = {sched_->snapshot().pending.size(), sched_->snapshot().running.size()};
  return !sched_->snapshot().pending.empty();
}

// The self-check ($LOCKSTEP_CHECK_SNAPSHOT, tests): the scheduler, kept up to date event by
// event, must hold the jobs that a snapshot built from every job holds (checked at the replay,
// under mu_), and plan what the pure plan() plans from that snapshot (checked after the plan).
// Stops lockstepd on a difference.
namespace {

[[noreturn]] void SelfCheckFailed(const char* what, const std::string& full,
                                  const std::string& scheduler) {
  log::Error("the scheduler's {} differ from a full snapshot's: full: {}; scheduler: {}", what,
             full, scheduler);
  std::abort();
}

}  // namespace

void Controller::CheckSchedulerJobsLocked(Time now) {
  check_reference_ = BuildSnapshotLocked(now);
  std::vector<std::string> want = DescribeJobs(*check_reference_);
  std::vector<std::string> have = DescribeJobs(sched_->snapshot());
  if (want == have) return;
  std::size_t i = 0;
  while (i < want.size() && i < have.size() && want[i] == have[i]) ++i;
  SelfCheckFailed("jobs", i < want.size() ? want[i] : "(end)", i < have.size() ? have[i] : "(end)");
}

void Controller::CheckSchedulerPlan(const engine::Plan& got, engine::PlanDetail detail) {
  const std::string want =
      engine::DescribePlan(engine::plan(*check_reference_, sched_->options()), detail);
  const std::string have = engine::DescribePlan(got, detail);
  if (want != have) SelfCheckFailed("plans", want, have);
  check_reference_.reset();
}

void Controller::EnforceLimitsLocked(Time now) {
  for (JobId id : std::vector<JobId>(active_.begin(), active_.end())) {
    JobEntry& e = jobs_.at(id);
    if (e.state != JobState::kRunning || e.timed_out) continue;
    engine::Job j = ToEngineJob(e, cluster_);
    const engine::Partition& part = cluster_.base.partitions[j.partition];
    Seconds limit = engine::ShapeOf(j, part).duration;
    // Time spent suspended does not count against the limit (Slurm adds it to the end).
    if (limit >= kUnlimited || now < e.start_time + limit + e.suspended_seconds) continue;
    e.timed_out = true;
    e.reason = "TimeLimit";
    PersistLocked({&e});
    TerminateLocked(e);
  }
}

}  // namespace lockstep::controller
