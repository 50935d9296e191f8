// What a node's health checks found, as a backend reports it (EventSink::NodeHealth): the raw
// observations of the checks (an XID and its GPU, an ECC count, a health program's exit code and
// first line). The controller classifies them (docs/health.md): a backend only observes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/types.h"

namespace lockstep::backend {

// One GPU of a node as NVML names it: the serial and UUID follow the board from host to host.
struct GpuIdentity {
  std::int32_t index = 0;
  std::string uuid;
  std::string serial;
};

// One observation. `check` names it:
//   "xid"                   an XID event on `gpu` (value: the XID)
//   "ecc_dbe"               volatile double-bit ECC errors on `gpu` (value: the count)
//   "remap_failed"          a row remapping failed on `gpu`
//   "remap_pending"         remapped rows wait for a GPU reset on `gpu`
//   "retired_pages_pending" retired pages wait for a reset on `gpu`
//   "recovery_action"       NVML's GPU recovery action field (value: 1 reset, 2 reboot, ...)
//   "gpu_count"             fewer GPUs than configured (value: how many NVML sees)
//   "program"               the site's health program (value: its exit code, 0-3; detail: the
//                           first line of its output, or why it gave no answer)
//   "k8s_condition"         a Node condition that reports trouble (detail: "<type>: <reason>:
//                           <message>")
//   "storage"               a shared file system of the node missing, not mounted or not
//                           answering (detail: "storage datasets/imagenet: not mounted")
// Every check name above, in one place: the agents' reports and the YAML's `health.thresholds`
// are checked against it.
inline constexpr std::string_view kHealthChecks[] = {
    "xid",     "ecc_dbe",       "remap_failed", "remap_pending", "retired_pages_pending",
    "recovery_action", "gpu_count", "program", "k8s_condition", "storage"};
inline bool IsHealthCheck(std::string_view check) {
  for (std::string_view c : kHealthChecks)
    if (c == check) return true;
  return false;
}

struct HealthFinding {
  std::string check;
  std::int32_t gpu = -1;  // device index on the node; -1: the node as a whole
  std::int64_t value = 0;
  std::string detail;
};

struct NodeHealthReport {
  std::string node;
  // Who checked, the prefix of a drain's reason: "health" (lockstep's agents) or "k8s" (a
  // Node's conditions and allocatable GPUs, from Kubernetes).
  std::string source = "health";
  // The node's GPUs (NVML's inventory); empty when the backend cannot see them.
  std::vector<GpuIdentity> gpus;
  // True: a full round of every check, so a condition absent here has passed. False: events
  // only (XIDs as they come), which say nothing of the other checks.
  bool full_round = true;
  // The checks a full round covers; empty: every check of its source. Two checkers of one node
  // (the health-only and the mounts-only agent on Kubernetes) each clear only their own.
  std::vector<std::string> checks;
  std::vector<HealthFinding> findings;
};

// Whether a full round of `r` speaks for `check`: a condition it covers and does not report
// has passed.
inline bool Covers(const NodeHealthReport& r, std::string_view check) {
  if (r.checks.empty()) return true;
  for (const std::string& c : r.checks)
    if (c == check) return true;
  return false;
}

}  // namespace lockstep::backend
