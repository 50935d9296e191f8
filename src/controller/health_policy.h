// How lockstepd reads what the health checks found (docs/health.md, "Classification"): pure
// functions of a finding and the cluster's `health:` section, no state.
#pragma once

#include <string>

#include "backend/health.h"
#include "config/health_config.h"

namespace lockstep::controller {

enum class HealthSeverity : std::uint8_t {
  kOk,
  kApplication,  // the job's own error (an application XID): blames the job, never drains
  kWarning,      // recorded and logged only
  kCritical,     // counts toward the check's threshold: drains, blames the GPU or node
  kUnknown,      // no answer (a program that timed out): changes nothing
};

struct ClassifiedFinding {
  HealthSeverity severity = HealthSeverity::kOk;
  bool event = false;  // an XID: happened once; else a condition that holds until it passes
  std::string what;    // "XID 79 (fell off the bus)", "2 double-bit ECC errors", ...
};

ClassifiedFinding Classify(const backend::HealthFinding& f, const config::HealthConfig& c);

// NVIDIA's short name of an XID ("fell off the bus"), or "" for one not in the table.
const char* XidName(std::int64_t xid);

// Where a finding was, for reasons and evidence: "GPU 3 serial 1650123456789 " or "".
std::string GpuWhere(const backend::NodeHealthReport& r, std::int32_t gpu);

}  // namespace lockstep::controller
