#include "backend/agent/health_monitor.h"

#include <algorithm>

#include "backend/agent/health_program.h"
#include "common/log.h"

namespace lockstep::agent {
namespace {

constexpr std::size_t kMaxUnsent = 1000;  // reports kept while lockstepd is away
constexpr auto kXidWait = std::chrono::milliseconds(500);

nlohmann::json ReportJson(const backend::NodeHealthReport& r) {
  nlohmann::json gpus = nlohmann::json::array(), findings = nlohmann::json::array();
  for (const backend::GpuIdentity& g : r.gpus)
    gpus.push_back({{"index", g.index}, {"uuid", g.uuid}, {"serial", g.serial}});
  for (const backend::HealthFinding& f : r.findings)
    findings.push_back(
        {{"check", f.check}, {"gpu", f.gpu}, {"value", f.value}, {"detail", f.detail}});
  nlohmann::json j = {
      {"node", r.node}, {"full_round", r.full_round}, {"gpus", gpus}, {"findings", findings}};
  if (!r.checks.empty()) j["checks"] = r.checks;
  return j;
}

// The checks a full round of `scope` speaks for (empty: all).
std::vector<std::string> ChecksOf(HealthScope scope) {
  std::vector<std::string> checks;
  if (scope == HealthScope::kAll) return checks;
  for (std::string_view c : backend::kHealthChecks) {
    const bool storage = c == "storage";
    if (c != "k8s_condition" && storage == (scope == HealthScope::kStorage)) checks.emplace_back(c);
  }
  return checks;
}

}  // namespace

Result<HealthSettings> DecodeHealthSettings(const nlohmann::json& c) {
  HealthSettings s;
  try {
    s.program = c.value("program", "");
    const std::int64_t interval = c.value("interval_s", std::int64_t{60});
    const std::int64_t timeout = c.value("timeout_s", std::int64_t{60});
    if (interval < 1 || interval > 86400)
      return InvalidArgument("health: interval_s must be from 1 to 86400");
    if (timeout < 1 || timeout > 86400)
      return InvalidArgument("health: timeout_s must be from 1 to 86400");
    s.interval = std::chrono::seconds(interval);
    s.timeout = std::chrono::seconds(timeout);
    if (c.contains("node_states")) {
      s.run_idle = s.run_busy = false;
      bool any_state = false;
      for (const auto& v : c.at("node_states")) {
        const std::string state = v.get<std::string>();
        if (state == "CYCLE") {
          s.cycle = true;
          continue;
        }
        any_state = true;
        if (state == "ANY") s.run_idle = s.run_busy = true;
        else if (state == "IDLE" || state == "NONDRAINED_IDLE") s.run_idle = true;
        else if (state == "ALLOC" || state == "MIXED") s.run_busy = true;
        else return InvalidArgument("health: node_states: unknown state " + state);
      }
      if (!any_state) s.run_idle = s.run_busy = true;  // CYCLE alone: every node, in turn
    }
    if (c.contains("configured_gpus"))
      s.configured_gpus = c.at("configured_gpus").get<std::map<std::string, int>>();
    if (c.contains("storage")) {
      s.storage_key = c.at("storage").dump();
      for (const auto& f : c.at("storage")) {
        StorageMount m;
        m.name = f.at("name").get<std::string>();
        m.kind = f.at("kind").get<std::string>();
        m.source = f.value("source", "");
        m.options = f.value("options", "");
        m.path = f.at("path").get<std::string>();
        m.read_only = f.value("read_only", false);
        const std::int64_t timeout = f.value("timeout_s", std::int64_t{10});
        if (timeout < 1 || timeout > 3600)
          return InvalidArgument("health: storage " + m.name + ": timeout_s must be 1-3600");
        m.timeout = std::chrono::seconds(timeout);
        m.nodes = f.value("nodes", std::vector<std::string>{});
        m.all_nodes = f.value("all_nodes", false);
        if (m.kind != "nfs" && m.kind != "bind" && m.kind != "host_path")
          return InvalidArgument("health: storage " + m.name + ": unknown kind " + m.kind);
        if (m.path.empty() || m.path[0] != '/')
          return InvalidArgument("health: storage " + m.name + ": path must be absolute");
        s.storage.push_back(std::move(m));
      }
    }
  } catch (const nlohmann::json::exception&) {
    return InvalidArgument("health: the settings have a field of the wrong type");
  }
  return s;
}

HealthMonitor::HealthMonitor(std::string agent, std::string server, std::vector<HealthNode> nodes,
                             std::function<bool(const std::string&)> busy, HealthScope scope,
                             std::string host_root)
    : agent_(std::move(agent)),
      scope_(scope),
      host_root_(std::move(host_root)),
      nodes_(std::move(nodes)),
      busy_(std::move(busy)),
      client_(std::move(server)) {
  const bool any_nvml = scope_ != HealthScope::kStorage &&
                        std::any_of(nodes_.begin(), nodes_.end(),
                                    [](const HealthNode& n) { return n.nvml; });
  if (any_nvml) nvml_ = NvmlHealth::Open();
  rounds_ = std::thread([this] { RoundLoop(); });
  if (nvml_ && nvml_->SupportsXids()) xids_ = std::thread([this] { XidLoop(); });
}

HealthMonitor::~HealthMonitor() {
  Stop();
}

void HealthMonitor::Configure(const HealthSettings& settings) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    settings_ = settings;
  }
  changed_.notify_all();
}

std::string HealthMonitor::StorageProblem(const std::string& node,
                                          std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!settings_ || settings_->storage.empty()) return "";
  changed_.wait_for(lock, wait, [this] {
    return stopping_ || !settings_ || settings_->storage_key == storage_checked_;
  });
  if (!settings_ || settings_->storage_key != storage_checked_) return "";  // not checked yet
  auto it = storage_problems_.find(node);
  return it == storage_problems_.end() ? "" : it->second;
}

void HealthMonitor::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (rounds_.joinable()) rounds_.join();
  if (xids_.joinable()) xids_.join();
}

backend::NodeHealthReport HealthMonitor::Round(const HealthNode& node, const HealthSettings& s,
                                               bool run_program) {
  backend::NodeHealthReport r;
  r.node = node.name;
  r.full_round = true;
  r.checks = ChecksOf(scope_);
  if (scope_ == HealthScope::kStorage) return r;  // its storage findings are added by the caller
  if (node.nvml && nvml_) {
    auto configured = s.configured_gpus.find(node.name);
    r.gpus = nvml_->Inventory();
    r.findings = nvml_->CheckRound(configured == s.configured_gpus.end() ? node.configured_gpus
                                                                          : configured->second);
  }
  if (run_program && !s.program.empty())
    r.findings.push_back(RunHealthProgram(s.program, node.name, s.timeout));
  return r;
}

std::map<std::string, std::vector<backend::HealthFinding>> HealthMonitor::StorageRound(
    const HealthSettings& s) {
  auto any_busy = [this](const std::vector<std::string>& nodes) {
    return std::any_of(nodes.begin(), nodes.end(), [this](const std::string& n) { return busy_(n); });
  };
  // Removed from the declaration: unmounted once none of its nodes runs a job.
  for (auto it = mounted_.begin(); it != mounted_.end();) {
    const bool declared = std::any_of(s.storage.begin(), s.storage.end(), [&](StorageMount m) {
      m = UnderHostRoot(std::move(m), host_root_);
      return m.path == it->first && m.kind == it->second.kind && m.source == it->second.source;
    });
    if (declared || any_busy(it->second.nodes)) {
      ++it;
      continue;
    }
    if (Status st = UnmountStorage(it->first, it->second.timeout); !st.ok())
      log::Warning("storage {}: {}", it->second.name, st.message());
    else
      log::Info("storage {}: unmounted from {} (no longer declared)", it->second.name, it->first);
    it = mounted_.erase(it);
  }
  std::map<std::string, std::vector<backend::HealthFinding>> findings;
  if (scope_ == HealthScope::kNodeChecks) return findings;  // the mounts-only agent's
  for (StorageMount m : s.storage) {
    m = UnderHostRoot(std::move(m), host_root_);
    // Only what this agent's nodes get is mounted and checked here.
    std::vector<std::string> ours;
    for (const HealthNode& node : nodes_)
      if (m.all_nodes || std::find(m.nodes.begin(), m.nodes.end(), node.name) != m.nodes.end())
        ours.push_back(node.name);
    if (ours.empty()) continue;
    m.nodes = ours;
    std::string problem = CheckStorage(m);
    if (problem == "not mounted" && m.kind != "host_path") {
      if (Status st = MountStorage(m); !st.ok()) {
        problem += " (" + st.message() + ")";
      } else {
        log::Info("storage {}: mounted {} at {}", m.name, m.source, m.path);
        mounted_[m.path] = m;
        problem = CheckStorage(m);
      }
    }
    if (problem.empty()) continue;
    for (const std::string& node : m.nodes)
      findings[node].push_back({"storage", -1, 0, "storage " + m.name + ": " + problem});
  }
  return findings;
}

void HealthMonitor::RoundLoop() {
  std::size_t next_node = 0;  // CYCLE: whose turn it is
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || settings_.has_value(); });
    if (stopping_) return;
    const HealthSettings s = *settings_;
    lock.unlock();
    std::map<std::string, std::vector<backend::HealthFinding>> storage = StorageRound(s);
    {
      std::lock_guard<std::mutex> relock(mu_);
      storage_problems_.clear();
      for (const auto& [node, found] : storage)
        for (const backend::HealthFinding& f : found)
          storage_problems_[node] += (storage_problems_[node].empty() ? "" : "; ") + f.detail;
      storage_checked_ = s.storage_key;
    }
    changed_.notify_all();
    std::vector<backend::NodeHealthReport> reports;
    const std::size_t count = s.cycle ? 1 : nodes_.size();
    for (std::size_t k = 0; k < count && !nodes_.empty(); ++k) {
      const HealthNode& node = nodes_[s.cycle ? next_node++ % nodes_.size() : k];
      const bool busy = busy_(node.name);
      const bool run_program = busy ? s.run_busy : s.run_idle;
      reports.push_back(Round(node, s, run_program));
      for (backend::HealthFinding& f : storage[node.name]) reports.back().findings.push_back(f);
      // A node whose state is not checked this round says nothing of its program: the
      // conditions of its last round stand.
      if (!run_program && !s.program.empty() && scope_ != HealthScope::kStorage)
        reports.back().full_round = false;
    }
    Send(std::move(reports));
    lock.lock();
    // CYCLE spreads the rounds of all nodes over one interval.
    const long turns = s.cycle ? static_cast<long>(std::max<std::size_t>(1, nodes_.size())) : 1;
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(s.interval) / turns;
    changed_.wait_for(lock, wait, [this, &s] {
      return stopping_ || settings_->interval != s.interval || settings_->program != s.program ||
             settings_->storage_key != s.storage_key;
    });
    if (stopping_) return;
  }
}

void HealthMonitor::XidLoop() {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
    }
    std::vector<backend::HealthFinding> xids = nvml_->WaitXids(kXidWait);
    if (xids.empty()) continue;
    std::vector<backend::NodeHealthReport> reports;
    for (const HealthNode& node : nodes_) {
      if (!node.nvml) continue;
      backend::NodeHealthReport r;
      r.node = node.name;
      r.full_round = false;
      r.gpus = nvml_->Inventory();
      r.findings = xids;
      reports.push_back(std::move(r));
    }
    Send(std::move(reports));
  }
}

void HealthMonitor::Send(std::vector<backend::NodeHealthReport> reports) {
  std::lock_guard<std::mutex> lock(send_mu_);
  for (const auto& r : reports) unsent_.push_back(ReportJson(r));
  while (unsent_.size() > kMaxUnsent) unsent_.pop_front();  // the oldest go first
  if (unsent_.empty()) return;
  nlohmann::json body = {{"agent", agent_},
                         {"reports", nlohmann::json(std::vector<nlohmann::json>(
                                         unsent_.begin(), unsent_.end()))}};
  Result<nlohmann::json> r = client_.Post("/api/v1/agent/health", body);
  const StatusCode code = r.ok() ? StatusCode::kOk : r.status().code();
  if (code == StatusCode::kInvalidArgument || code == StatusCode::kPermissionDenied ||
      code == StatusCode::kNotFound) {
    // Refused, not lost: sending them again would be refused again.
    log::Warning("health reports refused by lockstepd: {}", r.status().message());
    unsent_.clear();
    return;
  }
  if (r.ok()) {
    unsent_.clear();
    return;
  }
  log::Warning("health reports not delivered ({}); kept for the next", r.status().message());
}

}  // namespace lockstep::agent
