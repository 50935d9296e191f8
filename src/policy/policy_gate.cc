#include "policy/policy_gate.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/log.h"

namespace lockstep::policy {
namespace {

std::string NowIso() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// What was asked, as the audit line shows it: only what the request says.
nlohmann::json Asked(const Request& r) {
  nlohmann::json a = nlohmann::json::object();
  if (!r.partitions.empty()) a["partitions"] = r.partitions;
  if (!r.account.empty()) a["account"] = r.account;
  if (!r.qos.empty()) a["qos"] = r.qos;
  if (r.gpus) a["gpus"] = *r.gpus;
  if (r.nodes) a["nodes"] = *r.nodes;
  if (r.cpus) a["cpus"] = *r.cpus;
  if (r.memory_mb) a["memory_mb"] = *r.memory_mb;
  if (r.time_limit) a["time_limit"] = *r.time_limit;
  if (!r.images.empty()) a["images"] = r.images;
  if (r.privileged) a["privileged"] = true;
  if (r.privilege_escalation) a["allow_privilege_escalation"] = true;
  if (r.host_network) a["host_network"] = true;
  if (r.host_pid) a["host_pid"] = true;
  if (r.host_ipc) a["host_ipc"] = true;
  if (!r.host_paths.empty()) a["host_paths"] = r.host_paths;
  if (!r.added_capabilities.empty()) a["capabilities"] = r.added_capabilities;
  if (!r.run_as_uids.empty()) a["run_as_users"] = r.run_as_uids;
  return a;
}

}  // namespace

Result<std::unique_ptr<PolicyGate>> PolicyGate::Open(GateOptions options) {
  Result<std::unique_ptr<AuditLog>> audit =
      AuditLog::Open(options.audit_log, options.audit_max_bytes, options.audit_keep);
  if (!audit.ok()) return audit.status();
  std::unique_ptr<PolicyGate> gate(new PolicyGate(std::move(options), std::move(*audit)));
  if (!gate->options_.policy_file.empty()) {
    Result<bool> read = gate->Reload();
    if (!read.ok()) return read.status();
  }
  return gate;
}

PolicyGate::PolicyGate(GateOptions options, std::unique_ptr<AuditLog> audit)
    : options_(std::move(options)),
      audit_(std::move(audit)),
      policy_(std::make_shared<Policy>()),
      storage_(options_.storage_paths) {
  if (options_.kubernetes_defaults) defaults_ = KubernetesDefaultRules();
}

PolicyGate::~PolicyGate() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (watch_.joinable()) watch_.join();
}

PolicyGate::Known PolicyGate::Lookup(const std::string& user,
                                     std::optional<std::uint32_t> uid) const {
  Known k;
  std::shared_ptr<const identity::UserDirectory> dir =
      options_.directory ? options_.directory() : nullptr;
  if (!dir) dir = identity::HostDirectory();
  std::optional<identity::UserRecord> u = !user.empty() ? dir->UserByName(user)
                                          : uid         ? dir->UserByUid(*uid)
                                                        : std::nullopt;
  k.at = std::chrono::steady_clock::now();
  if (!u) return k;
  k.uid = u->uid;
  std::vector<std::uint32_t> gids = u->groups;
  gids.insert(gids.begin(), u->gid);
  for (std::uint32_t gid : gids)
    if (std::optional<identity::GroupRecord> g = dir->GroupByGid(gid)) k.groups.push_back(g->name);
  k.groups.insert(k.groups.begin(), u->name);  // the name first, for Identify
  return k;
}

void PolicyGate::Identify(Request& r) const {
  // Cached by name (or "#uid"); an entry older than reload_period is looked up again, so a
  // change of the identity source shows within that time, as the source's own reload does.
  const std::string key = !r.user.empty() ? r.user : r.uid ? "#" + std::to_string(*r.uid) : "";
  if (key.empty()) return;
  const auto now = std::chrono::steady_clock::now();
  Known k;
  {
    std::lock_guard<std::mutex> lock(known_mu_);
    auto it = known_.find(key);
    if (it != known_.end() && now - it->second.at < options_.reload_period) k = it->second;
  }
  if (k.at == std::chrono::steady_clock::time_point{}) {
    k = Lookup(r.user, r.uid);
    std::lock_guard<std::mutex> lock(known_mu_);
    if (known_.size() >= 100'000) known_.clear();  // bounded: names are the callers' to choose
    known_[key] = k;
  }
  if (!k.uid) return;
  r.uid = k.uid;
  r.user = k.groups.front();
  // Added to what the request says already (a Kubernetes user's groups).
  r.groups.insert(r.groups.end(), k.groups.begin() + 1, k.groups.end());
}

Decision PolicyGate::Decide(const Request& r) const {
  std::shared_ptr<const Policy> policy;
  Context context;
  {
    std::lock_guard<std::mutex> lock(mu_);
    policy = policy_;
    context.storage_paths = storage_;
  }
  std::vector<const Rule*> rules;
  rules.reserve(policy->rules.size() + defaults_.size());
  for (const Rule& rule : policy->rules) rules.push_back(&rule);
  for (const Rule& rule : defaults_) rules.push_back(&rule);
  return Evaluate(rules, r, context);
}

void PolicyGate::Record(const Request& r, const Decision& d, const std::string& caller) {
  const char* verdict = d.verdict == Verdict::kDeny ? "deny" : "allow";
  nlohmann::json line = {{"time", NowIso()},
                         {"who", caller.empty() ? r.user : caller},
                         {"user", r.user},
                         {"kind", KindName(r.kind)},
                         {"operation", r.operation},
                         {"asked", Asked(r)},
                         {"verdict", verdict}};
  if (r.uid) line["uid"] = *r.uid;
  if (!r.name.empty()) line["name"] = r.name;
  if (!r.ns.empty()) line["namespace"] = r.ns;
  if (!d.rule.empty()) line["rule"] = d.rule;
  if (!d.message.empty()) line["message"] = d.message;
  for (const Finding& f : d.audited)
    line["audited"].push_back({{"rule", f.rule}, {"message", f.message}});
  audit_->Append(line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_[{std::string(KindName(r.kind)), verdict, d.rule}];
  for (const Finding& f : d.audited) ++counts_[{std::string(KindName(r.kind)), "audit", f.rule}];
}

Decision PolicyGate::Check(Request r, const std::string& caller) {
  Identify(r);
  Decision d = Decide(r);
  Record(r, d, caller);
  return d;
}

bool PolicyGate::Trusted(const std::string& kubernetes_user) const {
  for (const std::string& t : options_.trusted_users)
    if (t == kubernetes_user) return true;
  return false;
}

void PolicyGate::SetStorage(std::vector<std::string> paths) {
  std::lock_guard<std::mutex> lock(mu_);
  storage_ = std::move(paths);
}

Result<std::string> PolicyGate::ReadFile() const {
  std::ifstream in(options_.policy_file, std::ios::binary);
  if (!in)
    return IoError("cannot open the policy file " + options_.policy_file + ": " +
                   std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<bool> PolicyGate::Reload() {
  if (options_.policy_file.empty()) return false;
  Result<std::string> text = ReadFile();
  if (!text.ok()) return text.status();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (*text == text_ && policy_->source == options_.policy_file) return false;
  }
  Result<Policy> parsed = ParsePolicy(*text, options_.policy_file);
  if (!parsed.ok()) return parsed.status();
  std::lock_guard<std::mutex> lock(mu_);
  text_ = std::move(*text);
  policy_ = std::make_shared<const Policy>(std::move(*parsed));
  return true;
}

void PolicyGate::Watch() {
  if (options_.policy_file.empty() || watch_.joinable()) return;
  watch_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!wake_.wait_for(lock, options_.reload_period, [this] { return stopping_; })) {
      lock.unlock();
      Result<bool> changed = Reload();
      if (!changed.ok()) {
        // Logged once per different text: a file being edited is not a flood.
        Result<std::string> text = ReadFile();
        const std::string now = text.ok() ? *text : changed.status().message();
        if (now != failed_text_)
          log::Error("{} (the rules stay as they were)", changed.status().message());
        failed_text_ = now;
      } else if (*changed) {
        failed_text_.clear();
        log::Info("{}: {} rule(s) now", options_.policy_file, RuleCount());
      }
      lock.lock();
    }
  });
}

nlohmann::json PolicyGate::DecisionJson(const Request& r, const Decision& d) {
  nlohmann::json out = {{"verdict", d.verdict == Verdict::kDeny ? "deny" : "allow"},
                        {"user", r.user},
                        {"kind", KindName(r.kind)},
                        {"audited", nlohmann::json::array()}};
  if (!d.rule.empty()) out["rule"] = d.rule;
  if (!d.message.empty()) out["message"] = d.message;
  for (const Finding& f : d.audited)
    out["audited"].push_back({{"rule", f.rule}, {"message", f.message}});
  return out;
}

std::size_t PolicyGate::RuleCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return policy_->rules.size() + defaults_.size();
}

std::string PolicyGate::MetricsText() const {
  std::string out =
      "# HELP lockstep_policy_decisions_total Admission decisions, by kind of request, verdict "
      "(allow, deny, or audit for an audit rule broken) and rule.\n"
      "# TYPE lockstep_policy_decisions_total counter\n";
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [key, n] : counts_) {
    const auto& [kind, verdict, rule] = key;
    out += fmt::format("lockstep_policy_decisions_total{{kind=\"{}\",verdict=\"{}\",rule=\"{}\"}} {}\n",
                       kind, verdict, rule, n);
  }
  out += fmt::format(
      "# HELP lockstep_policy_rules Rules in force (the file's and the defaults).\n"
      "# TYPE lockstep_policy_rules gauge\nlockstep_policy_rules {}\n",
      policy_->rules.size() + defaults_.size());
  return out;
}

}  // namespace lockstep::policy
