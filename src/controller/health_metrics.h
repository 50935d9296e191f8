// The health checks' own results for the metrics (docs/observability.md, "Node health"): per
// node and check the last result and how many results came, per node the rounds and reports
// received and the drains the checker made. Kept by the controller beside each node's standing
// (health_book.h), memory only, since lockstepd started; rendered as Prometheus text.
//
// Thread-safety: none of its own; the controller guards it with its mutex, and a scrape renders
// a copy.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backend/health.h"
#include "config/health_config.h"

namespace lockstep::controller {

class Exposition;

// A check's result as the site's health program gives it (Nagios' exit codes).
enum class CheckStatus : std::uint8_t { kOk = 0, kWarning = 1, kCritical = 2, kUnknown = 3 };

struct CheckResult {
  CheckStatus status = CheckStatus::kOk;
  std::uint64_t runs = 0;  // results received: full rounds since it first reported, and events
};

struct NodeCheckResults {
  std::map<std::string, CheckResult> checks;  // by check ("program", "xid", "ecc_dbe", ...)
  std::uint64_t rounds = 0;   // full rounds of every check
  std::uint64_t reports = 0;  // rounds and event reports (XIDs as they come)
  std::uint64_t drains = 0;   // times the checker drained the node
};

// What one report says of each check. A full round runs every check: one the node reported
// before and absent now has passed (ok). A report of events only says something of the checks
// it names. The worst finding of a check in the report is its result; an application's own
// error (an application XID) blames the job, so it is ok for the node.
void RecordCheckResults(NodeCheckResults& results, const backend::NodeHealthReport& report,
                        const config::HealthConfig& policy);

struct NodeHealthMetrics {
  std::string node;
  NodeCheckResults results;
  bool drained_by_health = false;  // drained by the checker now
};

// lockstep_health_check_status{node,check}, lockstep_health_check_runs{node,check},
// lockstep_health_rounds{node}, lockstep_health_reports{node}, lockstep_health_drains{node},
// lockstep_health_drained{node}.
void RenderHealthMetrics(Exposition& x, const std::vector<NodeHealthMetrics>& nodes);

}  // namespace lockstep::controller
