// Fleet health (docs/health.md): what the backends' health checks report becomes drains with a
// reason, resumes of the checker's own drains, failures recorded against GPUs and hosts, and
// the jobs a failing GPU hits ended with cause `gpu` and requeued at once.
#include <algorithm>
#include <bit>
#include <ctime>
#include <optional>
#include <set>

#include "common/log.h"
#include "controller/controller.h"
#include "controller/controller_internal.h"
#include "controller/health_book.h"
#include "controller/health_policy.h"

namespace lockstep::controller {
namespace {

constexpr const char* kHealthUser = "lockstep-health";
constexpr std::size_t kMaxFailuresKept = 1000;  // per GPU or host; the oldest go first

// Critical findings of `check` within the threshold's window, with `now` counted.
bool OverThreshold(std::deque<Time>& times, const config::HealthThreshold& t, Time now) {
  times.push_back(now);
  if (t.window > 0)
    while (!times.empty() && times.front() <= now - t.window) times.pop_front();
  while (times.size() > static_cast<std::size_t>(t.count) + 1000) times.pop_front();
  return static_cast<std::int32_t>(times.size()) >= t.count;
}

std::size_t FailuresSince(const std::vector<HealthFailure>& failures, Time since) {
  return std::count_if(failures.begin(), failures.end(),
                       [&](const HealthFailure& f) { return f.time >= since; });
}

// "2026-12-02T13:30:08" (UTC), as evidence reads.
std::string TimeText(Time t) {
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  ::gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

std::string ExcludedReason(const GpuRecord& rec) {
  return "health: GPU " + std::to_string(rec.index) + " serial " +
         HealthBook::KeyOf(rec.serial, rec.uuid) + " excluded (bad actor); lockstep health --clear";
}

// A condition's key in NodeStanding::conditions: "source:check/gpu".
std::string ConditionKey(const std::string& source, const std::string& check, std::int32_t gpu) {
  return source + ":" + check + "/" + std::to_string(gpu);
}

// Whether the full round `r` speaks for the condition `key`: its source's, of a check it covers.
bool CoveredBy(const backend::NodeHealthReport& r, const std::string& key) {
  const std::size_t colon = key.find(':'), slash = key.rfind('/');
  if (colon == std::string::npos || slash == std::string::npos || slash < colon) return true;
  return key.compare(0, colon, r.source) == 0 && colon == r.source.size() &&
         backend::Covers(r, std::string_view(key).substr(colon + 1, slash - colon - 1));
}

void Keep(std::vector<HealthFailure>& failures, HealthFailure f) {
  failures.push_back(std::move(f));
  if (failures.size() > kMaxFailuresKept) failures.erase(failures.begin());
}

}  // namespace

void Controller::NodeHealth(backend::NodeHealthReport report) {
  QueueEvent([this, report = std::move(report)](Time now) { NodeHealthLocked(report, now); });
}

void Controller::SetFailure(JobEntry& job, std::string cause, std::string detail) {
  job.failure_cause = std::move(cause);
  job.failure_detail = std::move(detail);
  job.failure_run = job.restart_count;
}

void Controller::NoteGpusLocked(const backend::NodeHealthReport& r, std::uint32_t n, Time now) {
  NodeStanding& standing = health_->nodes[r.node];
  // The GPUs it holds now: a serial seen before on another host keeps its history.
  for (const backend::GpuIdentity& g : r.gpus) {
    const std::string key = HealthBook::KeyOf(g.serial, g.uuid);
    if (key.empty()) continue;
    standing.gpu_keys[g.index] = key;
    GpuRecord& rec = health_->gpus[key];
    if (rec.host != r.node || rec.index != g.index || rec.serial != g.serial ||
        rec.uuid != g.uuid) {
      rec.serial = g.serial, rec.uuid = g.uuid, rec.host = r.node, rec.index = g.index;
      rec.hosts.insert(r.node);
      health_->uuid_to_key[g.uuid] = key;
      PersistHealthLocked("health_gpus", key, GpuRecordJson(rec));
    }
  }
  // A bad actor moved here keeps its node out too.
  for (const auto& [index, key] : standing.gpu_keys)
    if (const GpuRecord& rec = health_->gpus[key]; rec.excluded && rec.host == r.node)
      HealthDrainLocked(n, ExcludedReason(rec), now, /*event=*/false);
}

void Controller::NodeHealthLocked(const backend::NodeHealthReport& r, Time now) {
  const std::uint32_t n = NodeIndexLocked(r.node);
  if (n == engine::kNone) return;
  const config::HealthConfig& policy = cluster_.health;
  NodeStanding& standing = health_->nodes[r.node];
  standing.last_report = now;
  ++standing.reports;
  RecordCheckResults(standing.results, r, policy);
  NoteGpusLocked(r, n, now);
  std::map<std::string, std::string> conditions;
  std::string drain_reason;
  bool drain_for_event = false;
  for (const backend::HealthFinding& f : r.findings) {
    const ClassifiedFinding c = Classify(f, policy);
    const std::string where = GpuWhere(r, f.gpu);
    if (c.severity == HealthSeverity::kApplication) {
      // The job's own error: evidence for its cause, never a drain.
      for (JobId id : active_) {
        JobEntry& e = jobs_.at(id);
        for (const PlacedNode& p : e.placement)
          if (p.node == r.node && f.gpu >= 0 && (p.gpus >> f.gpu & 1))
            e.app_evidence = c.what + " on " + where + "of " + r.node;
      }
      log::Info("node {}: {}{} (application error)", r.node, where, c.what);
      continue;
    }
    if (c.severity == HealthSeverity::kWarning) {
      log::Warning("node {}: {}{} (warning)", r.node, where, c.what);
      continue;
    }
    const std::string condition_key = ConditionKey(r.source, f.check, f.gpu);
    if (c.severity == HealthSeverity::kUnknown) {
      // No answer: whatever the check said last still stands.
      if (auto was = standing.conditions.find(condition_key); was != standing.conditions.end())
        conditions.insert(*was);
      continue;
    }
    if (c.severity != HealthSeverity::kCritical) continue;  // ok
    const std::string reason = r.source + ": " + where + c.what;
    if (!c.event) conditions[condition_key] = reason;
    // A condition is a failure once, when it appears; an event each time it comes.
    const bool new_failure = c.event || !standing.conditions.count(condition_key);
    if (new_failure) RecordFailureLocked(r, f.gpu, c.what, now);
    auto threshold = policy.thresholds.find(f.check);
    const config::HealthThreshold t =
        threshold == policy.thresholds.end() ? config::HealthThreshold{} : threshold->second;
    if (OverThreshold(standing.recent[f.check], t, now)) {
      drain_for_event = drain_for_event || c.event;
      if (drain_reason.empty()) drain_reason = reason;
    }
  }
  if (r.full_round) {
    // What this round does not speak for (another checker's, another source's) stands.
    for (auto& kept : standing.conditions)
      if (!CoveredBy(r, kept.first)) conditions.insert(std::move(kept));
    standing.conditions = std::move(conditions);
  }
  if (!drain_reason.empty()) HealthDrainLocked(n, drain_reason, now, drain_for_event);
  if (r.full_round) MaybeHealthResumeLocked(n, now);
}

void Controller::RecordFailureLocked(const backend::NodeHealthReport& r, std::int32_t gpu,
                                     const std::string& what, Time now) {
  HealthFailure failure{now, r.node, gpu, what, 0};
  // The jobs on that GPU (or, for a node-wide fault, none: the node is drained and its jobs
  // run on) end now: their GPU is gone.
  if (gpu >= 0) {
    for (JobId id : std::vector<JobId>(active_.begin(), active_.end())) {
      JobEntry& e = jobs_.at(id);
      if (e.state != JobState::kRunning && e.state != JobState::kSuspended) continue;
      const bool on_gpu = std::any_of(e.placement.begin(), e.placement.end(),
                                      [&](const PlacedNode& p) {
                                        return p.node == r.node && (p.gpus >> gpu & 1);
                                      });
      if (!on_gpu) continue;
      failure.job = id;
      SetFailure(e, "gpu",
                 GpuWhere(r, gpu) + what + " on " + r.node + " at " + TimeText(now));
      log::Warning("job {}: {} {}", e.DisplayId(), e.failure_cause, e.failure_detail);
      if (e.spec->requeue.value_or(true) && !e.cancel_requested) {
        RequeueLocked(e, "GpuFail", now);
      } else {
        e.reason = "NodeFail";
        SendLocked({Command::Terminate{{e.id, e.restart_count}, 0}});
        EndJobLocked(e, {0, 0, false}, now, JobState::kNodeFail);
      }
    }
  }
  NodeRecord& host = health_->hosts[r.node];
  host.name = r.node;
  Keep(host.failures, failure);
  PersistHealthLocked("health_nodes", r.node, NodeRecordJson(host));
  if (gpu < 0) return;
  auto key = health_->nodes[r.node].gpu_keys.find(gpu);
  if (key == health_->nodes[r.node].gpu_keys.end()) return;  // no serial nor UUID known
  GpuRecord& rec = health_->gpus[key->second];
  Keep(rec.failures, failure);
  const config::HealthThreshold& bad = cluster_.health.bad_gpu;
  const Time since = std::max(rec.cleared_at, bad.window > 0 ? now - bad.window + 1 : Time{0});
  if (!rec.excluded &&
      FailuresSince(rec.failures, since) >= static_cast<std::size_t>(bad.count)) {
    rec.excluded = true;
    log::Warning("GPU serial {} uuid {}: {} failures, excluded until an operator clears it",
                 rec.serial, rec.uuid, rec.failures.size());
  }
  PersistHealthLocked("health_gpus", key->second, GpuRecordJson(rec));
  if (rec.excluded)
    HealthDrainLocked(NodeIndexLocked(r.node), ExcludedReason(rec), now, /*event=*/false);
}

void Controller::HealthDrainLocked(std::uint32_t n, const std::string& reason, Time now,
                                   bool event) {
  NodeInfo& info = nodes_[n];
  if (info.health_drain && event && !info.health_event) {  // ours already: now for an event too
    info.health_event = true;
    PersistNodeLocked(n);
  }
  if (info.admin != engine::NodeState::kUp) return;  // drained or down already: leave it be
  info.admin = engine::NodeState::kDrain;
  info.health_drain = true;
  info.health_event = event;
  info.reason = reason;
  info.reason_user = kHealthUser;
  info.reason_time = now;
  ++health_->nodes[cluster_.base.nodes[n].name].results.drains;
  log::Warning("node {} drained: {}", cluster_.base.nodes[n].name, reason);
  PersistNodeLocked(n);
  RequestPassLocked();
}

bool Controller::HasExcludedGpuLocked(const std::string& node) const {
  for (const auto& [key, rec] : health_->gpus)
    if (rec.excluded && rec.host == node) return true;
  return false;
}

void Controller::MaybeHealthResumeLocked(std::uint32_t n, Time now) {
  NodeInfo& info = nodes_[n];
  const std::string& name = cluster_.base.nodes[n].name;
  const NodeStanding& standing = health_->nodes[name];
  if (!info.health_drain || info.admin != engine::NodeState::kDrain) return;
  if (!standing.conditions.empty() && !info.health_event && !HasExcludedGpuLocked(name)) {
    // Still held, maybe by another finding than the drain's first: the reason names one that
    // holds it now.
    const bool current = std::any_of(standing.conditions.begin(), standing.conditions.end(),
                                     [&](const auto& c) { return c.second == info.reason; });
    if (!current) {
      info.reason = standing.conditions.begin()->second;
      info.reason_time = now;
      PersistNodeLocked(n);
    }
    return;
  }
  if (!standing.conditions.empty() || info.health_event || HasExcludedGpuLocked(name)) return;
  log::Info("node {} resumed: its health checks pass (was: {})", name, info.reason);
  info.admin = engine::NodeState::kUp;
  info.health_drain = false;
  info.health_event = false;
  info.reason.clear();
  info.reason_user = kHealthUser;
  info.reason_time = now;
  PersistNodeLocked(n);
  RequestPassLocked();
}

void Controller::ClearNodeEventDrainLocked(const std::string& node) {
  if (std::uint32_t n = NodeIndexLocked(node); n != engine::kNone) nodes_[n].health_event = false;
  auto it = health_->nodes.find(node);
  if (it != health_->nodes.end()) it->second.recent.clear();
}

Status Controller::ClearHealth(const Caller& caller, const std::string& what) {
  if (!IsOperator(caller.uid)) return PermissionDenied("only an operator may clear health records");
  std::optional<store::PendingWrite> write;
  {
    HeldLock lock(*this);
    const Time now = clock_.Now();
    std::string key = what;
    if (!health_->gpus.count(key)) {
      auto by_uuid = health_->uuid_to_key.find(what);
      if (by_uuid != health_->uuid_to_key.end()) key = by_uuid->second;
    }
    std::uint32_t node = NodeIndexLocked(what);
    auto gpu = health_->gpus.find(key);
    if (gpu == health_->gpus.end() && node == engine::kNone)
      return NotFound("no GPU (serial or UUID) nor node named " + what);
    if (gpu != health_->gpus.end()) {
      gpu->second.excluded = false;
      gpu->second.cleared_at = now + 1;  // the failures so far no longer count
      PersistHealthLocked("health_gpus", key, GpuRecordJson(gpu->second));
      node = NodeIndexLocked(gpu->second.host);
    } else {
      ClearNodeEventDrainLocked(what);
    }
    if (node != engine::kNone) {
      ClearNodeEventDrainLocked(cluster_.base.nodes[node].name);
      MaybeHealthResumeLocked(node, now);
    }
    if (node != engine::kNone) write = PersistNodeLocked(node);
  }
  return write ? Durable(std::move(*write)) : Status::Ok();
}

nlohmann::json Controller::Health(Seconds window) const {
  HeldLock lock(*this);
  const Time now = clock_.Now();
  const Time since = window > 0 ? now - window : 0;
  nlohmann::json gpus = nlohmann::json::array(), hosts = nlohmann::json::array();
  for (const auto& [key, rec] : health_->gpus) {
    nlohmann::json j = GpuRecordJson(rec);
    j["failures_in_window"] = FailuresSince(rec.failures, std::max(since, rec.cleared_at));
    gpus.push_back(std::move(j));
  }
  // Every node that has reported or failed: its failures, and its standing with the checks.
  std::set<std::string> names;
  for (const auto& [name, rec] : health_->hosts) names.insert(name);
  for (const auto& [name, standing] : health_->nodes) names.insert(name);
  for (const std::string& name : names) {
    auto rec = health_->hosts.find(name);
    nlohmann::json j = rec == health_->hosts.end() ? NodeRecordJson(NodeRecord{name, {}})
                                                   : NodeRecordJson(rec->second);
    j["failures_in_window"] =
        rec == health_->hosts.end() ? 0 : FailuresSince(rec->second.failures, since);
    if (auto s = health_->nodes.find(name); s != health_->nodes.end()) {
      nlohmann::json conditions = nlohmann::json::array();
      for (const auto& [key, reason] : s->second.conditions) conditions.push_back(reason);
      j["conditions"] = conditions;
      j["reports"] = s->second.reports;
      j["last_report"] = s->second.last_report;
    }
    const std::uint32_t n = NodeIndexLocked(name);
    if (n != engine::kNone) {
      j["drained_by_health"] = nodes_[n].health_drain;
      j["reason"] = nodes_[n].reason;
    }
    hosts.push_back(std::move(j));
  }
  auto by_failures = [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["failures_in_window"].get<std::size_t>() > b["failures_in_window"].get<std::size_t>();
  };
  std::stable_sort(gpus.begin(), gpus.end(), by_failures);
  std::stable_sort(hosts.begin(), hosts.end(), by_failures);
  return {{"window", window}, {"now", now}, {"gpus", gpus}, {"nodes", hosts},
          {"bad_gpu", {{"count", cluster_.health.bad_gpu.count},
                       {"window", cluster_.health.bad_gpu.window}}}};
}

void Controller::PersistHealthLocked(const std::string& table, const std::string& key,
                                     const nlohmann::json& record) {
  store::PendingWrite write = store_->PutAsync({{table, key, record.dump()}});
  outbox_.push_back({write, std::nullopt});
  ++outbox_queued_;
  outbox_changed_.notify_all();
}

Status Controller::LoadHealthLocked() {
  Result<std::vector<store::Record>> gpus = store_->Scan("health_gpus");
  if (!gpus.ok()) return gpus.status();
  for (const store::Record& r : *gpus) {
    Result<GpuRecord> g = GpuRecordFromJson(r.value);
    if (!g.ok()) return Internal("store: " + r.key + ": " + g.status().message());
    health_->uuid_to_key[g->uuid] = r.key;
    health_->nodes[g->host].gpu_keys[g->index] = r.key;
    health_->gpus[r.key] = std::move(*g);
  }
  Result<std::vector<store::Record>> hosts = store_->Scan("health_nodes");
  if (!hosts.ok()) return hosts.status();
  for (const store::Record& r : *hosts) {
    Result<NodeRecord> n = NodeRecordFromJson(r.value);
    if (!n.ok()) return Internal("store: " + r.key + ": " + n.status().message());
    health_->hosts[r.key] = std::move(*n);
  }
  return Status::Ok();
}

}  // namespace lockstep::controller
