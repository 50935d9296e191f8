#include "controller/health_metrics.h"

#include "controller/exposition.h"
#include "controller/health_policy.h"

namespace lockstep::controller {
namespace {

CheckStatus StatusOf(HealthSeverity s) {
  switch (s) {
    case HealthSeverity::kOk:
    case HealthSeverity::kApplication: return CheckStatus::kOk;
    case HealthSeverity::kWarning: return CheckStatus::kWarning;
    case HealthSeverity::kCritical: return CheckStatus::kCritical;
    case HealthSeverity::kUnknown: return CheckStatus::kUnknown;
  }
  return CheckStatus::kUnknown;
}

// Which of two results of one check in one report stands: critical, then unknown (no answer),
// then warning, then ok.
int Rank(CheckStatus s) {
  switch (s) {
    case CheckStatus::kOk: return 0;
    case CheckStatus::kWarning: return 1;
    case CheckStatus::kUnknown: return 2;
    case CheckStatus::kCritical: return 3;
  }
  return 3;
}

}  // namespace

void RecordCheckResults(NodeCheckResults& results, const backend::NodeHealthReport& report,
                        const config::HealthConfig& policy) {
  ++results.reports;
  std::map<std::string, CheckStatus> said;
  for (const backend::HealthFinding& f : report.findings) {
    const CheckStatus s = StatusOf(Classify(f, policy).severity);
    auto [it, added] = said.try_emplace(f.check, s);
    if (!added && Rank(s) > Rank(it->second)) it->second = s;
  }
  if (report.full_round) {
    ++results.rounds;
    for (auto& [check, result] : results.checks)
      if (!said.count(check) && backend::Covers(report, check)) {
        result.status = CheckStatus::kOk;
        ++result.runs;
      }
  }
  for (const auto& [check, status] : said) {
    CheckResult& r = results.checks[check];
    r.status = status;
    ++r.runs;
  }
}

void RenderHealthMetrics(Exposition& x, const std::vector<NodeHealthMetrics>& nodes) {
  x.Family("lockstep_health_check_status", "gauge",
           "Last result of a node's health check: 0 ok, 1 warning, 2 critical, 3 unknown");
  for (const NodeHealthMetrics& n : nodes)
    for (const auto& [check, r] : n.results.checks)
      x.Sample("lockstep_health_check_status", {{"node", n.node}, {"check", check}},
               static_cast<std::int64_t>(r.status));
  x.Family("lockstep_health_check_runs", "gauge",
           "Results of a node's health check received since lockstepd started");
  for (const NodeHealthMetrics& n : nodes)
    for (const auto& [check, r] : n.results.checks)
      x.Sample("lockstep_health_check_runs", {{"node", n.node}, {"check", check}},
               static_cast<std::int64_t>(r.runs));
  auto per_node = [&](const char* name, const char* help, auto value) {
    x.Family(name, "gauge", help);
    for (const NodeHealthMetrics& n : nodes)
      x.Sample(name, {"node", n.node}, static_cast<std::int64_t>(value(n)));
  };
  using N = const NodeHealthMetrics&;
  per_node("lockstep_health_rounds", "Full rounds of a node's health checks since lockstepd started",
           [](N n) { return n.results.rounds; });
  per_node("lockstep_health_reports",
           "Health reports of a node (full rounds and events) since lockstepd started",
           [](N n) { return n.results.reports; });
  per_node("lockstep_health_drains", "Drains of a node by its health checks since lockstepd started",
           [](N n) { return n.results.drains; });
  per_node("lockstep_health_drained", "1 while the node is drained by its health checks",
           [](N n) { return n.drained_by_health ? 1 : 0; });
}

}  // namespace lockstep::controller
