// Start-up, recovery, persistence and the scheduling loop.
#include "controller/controller.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

#include "controller/controller_internal.h"
#include "controller/job_convert.h"
#include "controller/job_env.h"
#include "engine/request.h"

namespace lockstep::controller {

Time WallNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

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

Controller::Controller(const ControllerOptions& options) : options_(options) {}

Result<std::unique_ptr<Controller>> Controller::Start(const ControllerOptions& options) {
  std::unique_ptr<Controller> c(new Controller(options));
  Result<spec::ClusterConfig> cluster = spec::LoadClusterConfig(options.cluster_config);
  if (!cluster.ok()) return cluster.status();
  c->cluster_ = std::move(*cluster);
  c->nodes_.resize(c->cluster_.base.nodes.size());
  for (std::size_t n = 0; n < c->nodes_.size(); ++n) {
    const engine::Node& node = c->cluster_.base.nodes[n];
    c->nodes_[n].admin = node.state;
    c->nodes_[n].reason = node.reason;
  }
  ::mkdir(options.state_dir.c_str(), 0755);
  store::StoreOptions so;
  so.path = options.state_dir + "/lockstepd.db";
  Result<std::unique_ptr<store::Store>> st = store::Store::Open(so);
  if (!st.ok()) return st.status();
  c->store_ = std::move(*st);
  LOCKSTEP_RETURN_IF_ERROR(c->Recover());
  c->scheduler_ = std::thread([raw = c.get()] { raw->ScheduleLoop(); });
  return c;
}

Controller::~Controller() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_scheduler_.notify_all();
  agent_commands_.notify_all();
  if (scheduler_.joinable()) scheduler_.join();
}

Status Controller::Recover() {
  Result<std::vector<store::Record>> records = store_->Scan("jobs");
  if (!records.ok()) return records.status();
  std::lock_guard<std::mutex> lock(mu_);
  for (const store::Record& r : *records) {
    Result<JobEntry> e = EntryFromJson(r.value);
    if (!e.ok()) return Internal("store: job " + r.key + ": " + e.status().message());
    JobId id = e->id;
    jobs_.emplace(id, std::move(*e));
  }
  Result<std::vector<store::Record>> nodes = store_->Scan("nodes");
  if (!nodes.ok()) return nodes.status();
  for (const store::Record& r : *nodes) {
    std::uint32_t n = NodeIndexLocked(r.key);
    if (n == engine::kNone) continue;  // a node since removed from the configuration
    nlohmann::json j = nlohmann::json::parse(r.value, nullptr, false);
    if (j.is_discarded()) return Internal("store: node " + r.key + ": not JSON");
    nodes_[n].admin = static_cast<engine::NodeState>(j.value("admin", 0));
    nodes_[n].reason = j.value("reason", "");
    nodes_[n].reason_user = j.value("reason_user", "");
    nodes_[n].reason_time = j.value("reason_time", Time{0});
  }
  // Running jobs keep running on their agents: they are adopted when the agents report in,
  // or end NODE_FAIL when their nodes stay silent (CheckAgentsLocked).
  return Status::Ok();
}

Status Controller::PersistLocked(const std::vector<const JobEntry*>& jobs) {
  std::vector<store::Record> records;
  records.reserve(jobs.size());
  for (const JobEntry* e : jobs) {
    char key[24];
    std::snprintf(key, sizeof key, "%020llu", static_cast<unsigned long long>(e->id));
    records.push_back({"jobs", key, EntryToJson(*e)});
  }
  return store_->Put(std::move(records));
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

void Controller::RequestPass() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    pass_requested_ = true;
  }
  wake_scheduler_.notify_one();
}

void Controller::RequestPassLocked() {
  pass_requested_ = true;
  wake_scheduler_.notify_one();
}

JobEnvInput Controller::EnvInputLocked(const JobEntry& job) const {
  // MASTER_ADDR: the address the first node's agent registered with.
  return MakeJobEnvInput(job, cluster_, [this](const std::string& node) {
    std::uint32_t n = NodeIndexLocked(node);
    return n == engine::kNone || nodes_[n].address.empty() ? std::string("127.0.0.1")
                                                           : nodes_[n].address;
  });
}

void Controller::ScheduleLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    wake_scheduler_.wait_for(lock, options_.periodic_pass,
                             [this] { return stopping_ || pass_requested_; });
    if (stopping_) break;
    if (pass_requested_) {
      // Let a burst of submissions arrive before planning once for all of them.
      lock.unlock();
      std::this_thread::sleep_for(options_.schedule_delay);
      lock.lock();
    }
    pass_requested_ = false;
    Time now = WallNow();
    CheckAgentsLocked(now);
    EnforceLimitsLocked(now);
    RunPassLocked(now);
  }
}

engine::Snapshot Controller::BuildSnapshotLocked(Time now, std::vector<JobEntry*>* pending,
                                                 std::vector<JobEntry*>* running) {
  engine::Snapshot s = cluster_.base;
  s.now = now;
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    const NodeInfo& info = nodes_[n];
    engine::Node& node = s.nodes[n];
    node.state = !info.responding ? engine::NodeState::kDown : info.admin;
  }
  for (auto& [id, e] : jobs_) {
    if (e.state == JobState::kPending) {
      s.pending.push_back(ToEngineJob(e, cluster_));
      pending->push_back(&e);
    } else if (e.state == JobState::kRunning || e.state == JobState::kCompleting) {
      engine::Job j = ToEngineJob(e, cluster_);
      for (const PlacedNode& p : e.placement) {
        std::uint32_t n = NodeIndexLocked(p.node);
        if (n != engine::kNone)
          j.allocation.nodes.push_back({n, p.cpus, p.mem_mb, p.gpus, __builtin_popcountll(p.gpus)});
      }
      s.running.push_back(std::move(j));
      running->push_back(&e);
    } else {
      engine::Outcome o = e.state == JobState::kCompleted   ? engine::Outcome::kCompleted
                          : e.state == JobState::kCancelled ? engine::Outcome::kCancelled
                                                            : engine::Outcome::kFailed;
      s.finished.push_back({id, o});
    }
  }
  s.associations = cluster_.base.associations;  // ToEngineJob may have added some
  return s;
}

void Controller::RunPassLocked(Time now) {
  std::vector<JobEntry*> pending, running;
  engine::Snapshot snap = BuildSnapshotLocked(now, &pending, &running);
  if (pending.empty()) return;
  engine::Plan plan = engine::plan(snap, cluster_.policy);
  std::unordered_map<JobId, JobEntry*> by_id;
  for (JobEntry* e : pending) by_id[e->id] = e;
  for (JobEntry* e : running) by_id[e->id] = e;
  for (const engine::Preemption& p : plan.preemptions) {
    auto it = by_id.find(p.victim);
    if (it == by_id.end()) continue;
    JobEntry& victim = *it->second;
    if (p.mode == engine::PreemptMode::kCancel) victim.cancel_requested = true;
    victim.reason = "Preempted";
    TerminateLocked(victim);
  }
  std::vector<const JobEntry*> changed;
  for (const engine::Start& st : plan.starts) {
    JobEntry& e = *by_id[st.job];
    StartJobLocked(e, st.allocation, now);
    changed.push_back(&e);
  }
  last_pending_.clear();
  for (const engine::Pending& p : plan.pending) {
    auto it = by_id.find(p.job);
    if (it == by_id.end()) continue;
    it->second->reason = engine::PendingReasonName(p.reason);
    it->second->expected_start = p.expected_start;
    last_pending_[p.job] = p;
  }
  for (const auto& [id, b] : plan.priorities) {
    auto it = by_id.find(id);
    if (it != by_id.end()) it->second->priority = b.total;
  }
  last_priorities_ = std::move(plan.priorities);
  if (!changed.empty()) {
    Status s = PersistLocked(changed);
    if (!s.ok()) std::fprintf(stderr, "lockstepd: store: %s\n", s.ToString().c_str());
  }
}

void Controller::EnforceLimitsLocked(Time now) {
  for (auto& [id, e] : jobs_) {
    if (e.state != JobState::kRunning || e.timed_out) continue;
    engine::Job j = ToEngineJob(e, cluster_);
    const engine::Partition& part = cluster_.base.partitions[j.partition];
    Seconds limit = engine::ShapeOf(j, part).duration;
    if (limit >= kUnlimited || now < e.start_time + limit) continue;
    e.timed_out = true;
    e.reason = "TimeLimit";
    TerminateLocked(e);
  }
}

void Controller::CheckAgentsLocked(Time now) {
  auto deadline = std::chrono::steady_clock::now() - std::chrono::seconds(options_.node_timeout);
  for (auto& [name, agent] : agents_) {
    if (agent->last_seen >= deadline) continue;
    for (const std::string& node : agent->nodes) {
      std::uint32_t n = NodeIndexLocked(node);
      if (n == engine::kNone || !nodes_[n].responding) continue;
      nodes_[n].responding = false;
      std::fprintf(stderr, "lockstepd: node %s not responding: DOWN\n", node.c_str());
      for (auto& [id, e] : jobs_) {
        if (e.state != JobState::kRunning && e.state != JobState::kCompleting) continue;
        bool on_node = std::any_of(e.placement.begin(), e.placement.end(),
                                   [&](const PlacedNode& p) { return p.node == node; });
        if (!on_node) continue;
        if (e.spec.requeue.value_or(true) && !e.cancel_requested) {
          RequeueLocked(e, "NodeFail", now);
        } else {
          EndJobLocked(e, 0, 0, false, now);
          e.state = JobState::kNodeFail;
          e.reason = "NodeFail";
          (void)PersistLocked({&e});
        }
      }
    }
  }
}

}  // namespace lockstep::controller
