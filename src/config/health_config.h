// The `health:` section of the cluster YAML (docs/health.md): the site's health program and how
// often the agents check, how XIDs are classified, and the count-in-window thresholds that turn
// findings into drains and GPUs into bad actors. A plain value; defaults documented here.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/types.h"

namespace lockstep::config {

struct HealthThreshold {
  std::int32_t count = 1;  // findings ...
  Seconds window = 0;      // ... within this long (0: ever, i.e. each one)
};

struct HealthConfig {
  std::string program;  // Slurm's HealthCheckProgram; empty: none
  Seconds interval = 60;  // HealthCheckInterval: between rounds of checks on each node
  Seconds timeout = 60;   // a program running longer is killed and reads as "unknown"
  // HealthCheckNodeState: ANY, IDLE, ALLOC, MIXED, NONDRAINED_IDLE, and CYCLE.
  std::vector<std::string> node_states = {"ANY"};
  // XIDs by NVIDIA's catalogue and the field's practice. Application errors never drain and
  // blame the job; critical ones drain and blame the GPU; warnings (and unlisted XIDs) are
  // recorded only.
  std::set<std::int64_t> xid_application = {13, 31, 43, 45, 68};
  std::set<std::int64_t> xid_warning = {63, 92};
  std::set<std::int64_t> xid_critical = {48, 61, 62, 64, 74, 79, 94, 95, 119, 120, 123, 140};
  // Per check ("xid", "ecc_dbe", "program", ...): how many critical findings drain. Absent: 1.
  std::map<std::string, HealthThreshold> thresholds;
  // A GPU with this many infrastructure failures in the window is a bad actor: its node stays
  // drained until an operator clears it (`lockstep health --clear SERIAL`).
  HealthThreshold bad_gpu{3, 7 * 24 * 3600};
  // Core dumps of jobs' processes kept as evidence (`core_dumps.max_size`): the tasks'
  // RLIMIT_CORE, so the kernel writes at most this much of a core. 0: no core dumps.
  std::int64_t core_max_mb = 1024;
  // Any key given: the agents get the settings (a cluster with no section still runs NVML's
  // checks, every `interval`).
  bool configured = false;
};

}  // namespace lockstep::config
