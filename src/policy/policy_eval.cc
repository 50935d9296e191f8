// Judging a request by the rules (policy.h).
#include <fmt/format.h>

#include <algorithm>

#include "common/duration.h"
#include "policy/policy.h"

namespace lockstep::policy {
namespace {

bool AnyOf(const std::vector<std::string>& allowed, const std::vector<std::string>& have) {
  for (const std::string& h : have)
    for (const std::string& a : allowed)
      if (Glob(a, h)) return true;
  return false;
}

bool AnyOf(const std::vector<std::string>& allowed, const std::string& have) {
  return AnyOf(allowed, std::vector<std::string>{have});
}

bool Matches(const Match& m, const Request& r) {
  if (!m.kinds.empty() && std::find(m.kinds.begin(), m.kinds.end(), r.kind) == m.kinds.end())
    return false;
  if (!m.users.empty() && !AnyOf(m.users, r.user)) return false;
  if (!m.groups.empty() && !AnyOf(m.groups, r.groups)) return false;
  if (!m.accounts.empty() && !AnyOf(m.accounts, r.account)) return false;
  if (!m.partitions.empty() && !AnyOf(m.partitions, r.partitions)) return false;
  if (!m.namespaces.empty() && (r.ns.empty() || !AnyOf(m.namespaces, r.ns))) return false;
  return true;
}

std::string Mb(std::int64_t mb) {
  return mb % 1024 == 0 ? std::to_string(mb / 1024) + "G" : std::to_string(mb) + "M";
}

// The first limit the request is over, or "".
std::string OverLimit(const Limits& l, const Request& r) {
  auto over = [](const std::optional<std::int64_t>& cap, const std::optional<std::int64_t>& ask) {
    return cap && ask && *ask > *cap;
  };
  const char* per = r.kind == Kind::kPod ? "per pod" : "per job";
  if (over(l.gpus_per_job, r.gpus))
    return fmt::format("at most {} GPUs {} (asked for {})", *l.gpus_per_job, per, *r.gpus);
  if (over(l.nodes_per_job, r.nodes))
    return fmt::format("at most {} nodes {} (asked for {})", *l.nodes_per_job, per, *r.nodes);
  if (over(l.cpus_per_job, r.cpus))
    return fmt::format("at most {} CPUs {} (asked for {})", *l.cpus_per_job, per, *r.cpus);
  if (over(l.memory_per_job_mb, r.memory_mb))
    return fmt::format("at most {} of memory {} (asked for {})", Mb(*l.memory_per_job_mb), per,
                       Mb(*r.memory_mb));
  if (l.time && r.time_limit && *r.time_limit > *l.time)
    return fmt::format("a time limit of at most {} (asked for {})", FormatSlurmDuration(*l.time),
                       FormatSlurmDuration(*r.time_limit));
  return "";
}

std::string Unmet(const Require& q, const Request& r) {
  if (!q.partitions.empty())
    for (const std::string& p : r.partitions)
      if (!AnyOf(q.partitions, p)) return "partition '" + p + "' is not allowed";
  if (!q.qos.empty() && !r.qos.empty() && !AnyOf(q.qos, r.qos))
    return "QOS '" + r.qos + "' is not allowed";
  if (!q.images.empty())
    for (const std::string& i : r.images)
      if (!AnyOf(q.images, i)) return "image '" + i + "' is not allowed";
  auto missing = [](const std::map<std::string, std::string>& want,
                    const std::map<std::string, std::string>& have,
                    const char* what) -> std::string {
    for (const auto& [k, pattern] : want) {
      auto it = have.find(k);
      if (it == have.end()) return std::string(what) + " '" + k + "' is required";
      if (!Glob(pattern, it->second))
        return std::string(what) + " '" + k + "=" + it->second + "' does not match '" + pattern +
               "'";
    }
    return "";
  };
  if (std::string m = missing(q.labels, r.labels, "label"); !m.empty()) return m;
  return missing(q.annotations, r.annotations, "annotation");
}

bool UnderStorage(const std::string& path, const std::vector<std::string>& storage) {
  for (std::string s : storage) {
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    if (path == s) return true;
    if (path.size() > s.size() && path.compare(0, s.size(), s) == 0 &&
        (s == "/" || path[s.size()] == '/'))
      return path.find("/../") == std::string::npos && !path.ends_with("/..");
  }
  return false;
}

std::string Forbidden(const Forbid& f, const Request& r, const Context& c) {
  if (f.privileged && r.privileged) return "a privileged container";
  if (f.privilege_escalation && r.privilege_escalation) return "allowPrivilegeEscalation: true";
  if (f.host_network && r.host_network) return "the host's network (hostNetwork)";
  if (f.host_pid && r.host_pid) return "the host's PIDs (hostPID)";
  if (f.host_ipc && r.host_ipc) return "the host's IPC (hostIPC)";
  if (f.host_path)
    for (const std::string& p : r.host_paths)
      if (!UnderStorage(p, c.storage_paths)) return "hostPath " + p;
  if (f.capabilities && !r.added_capabilities.empty())
    return "added capability " + r.added_capabilities.front();
  if (f.run_as_other_user) {
    // A known user runs as themselves only; anyone else (a service account, an administrator's
    // kubectl) may name no known user's uid and not root.
    for (std::int64_t uid : r.run_as_uids) {
      if (r.uid) {
        if (uid != *r.uid) return fmt::format("runAsUser {} (not {}'s uid {})", uid, r.user, *r.uid);
        continue;
      }
      if (uid == 0) return "runAsUser 0 (root)";
    }
  }
  for (const std::string& k : f.labels)
    if (r.labels.count(k)) return "label '" + k + "'";
  for (const std::string& k : f.annotations)
    if (r.annotations.count(k)) return "annotation '" + k + "'";
  return "";
}

// What in `r` breaks `rule`, or "".
std::string Broken(const Rule& rule, const Request& r, const Context& c) {
  if (std::string s = OverLimit(rule.limits, r); !s.empty()) return s;
  if (std::string s = Unmet(rule.require, r); !s.empty()) return s;
  if (std::string s = Forbidden(rule.forbid, r, c); !s.empty()) return s + " is not allowed";
  return "";
}

}  // namespace

bool Glob(std::string_view pattern, std::string_view text) {
  // Iterative wildcard match with one backtracking point: linear in practice, no recursion.
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

Decision Evaluate(const std::vector<const Rule*>& rules, const Request& request,
                  const Context& context) {
  Decision d;
  for (const Rule* rule : rules) {
    if (!Matches(rule->match, request)) continue;
    if (rule->action == Action::kAllow) {
      d.rule = rule->name;
      return d;
    }
    std::string broken = Broken(*rule, request, context);
    if (broken.empty()) continue;
    std::string message = "policy rule '" + rule->name + "': " +
                          (rule->message.empty() ? "" : rule->message + ": ") + broken;
    if (rule->action == Action::kAudit) {
      d.audited.push_back({rule->name, rule->action, std::move(message)});
      continue;
    }
    d.verdict = Verdict::kDeny;
    d.rule = rule->name;
    d.message = std::move(message);
    return d;
  }
  return d;
}

}  // namespace lockstep::policy
