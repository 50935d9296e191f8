// The controller's health records (internal to src/controller): each node's standing with its
// checks, and every infrastructure failure recorded against the GPU's serial and UUID and the
// host, durable in the store (tables "health_gpus" and "health_nodes", docs/health.md), so that
// a GPU moved to another host, or a host renamed, keeps its history.
// Guarded by the controller's mu_, like the rest of its state.
#pragma once

#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/types.h"
#include "controller/health_metrics.h"

namespace lockstep::controller {

struct HealthFailure {
  Time time = 0;
  std::string host;
  std::int32_t gpu = -1;  // device index on that host; -1: the node
  std::string what;       // "XID 79 (fell off the bus)"
  JobId job = 0;          // a job it ended, if any
};

// One GPU board, by serial (or UUID when NVML gives no serial).
struct GpuRecord {
  std::string serial, uuid;
  std::set<std::string> hosts;  // every host it was seen in, the last one in `host`
  std::string host;
  std::int32_t index = -1;
  std::vector<HealthFailure> failures;
  bool excluded = false;  // over the bad-actor threshold: its node stays drained until cleared
  Time cleared_at = 0;    // failures before this do not count toward the threshold
};

struct NodeRecord {
  std::string name;
  std::vector<HealthFailure> failures;
};

// A node's standing with its checks (memory only: the next round says it again).
struct NodeStanding {
  // The critical conditions of its checkers' last full rounds, by "source:check/gpu": their
  // reasons.
  std::map<std::string, std::string> conditions;
  // Critical findings per check, for the count-in-window thresholds.
  std::map<std::string, std::deque<Time>> recent;
  Time last_report = 0;
  std::uint64_t reports = 0;  // health reports received since lockstepd started
  std::map<std::int32_t, std::string> gpu_keys;  // device index -> its GpuRecord's key
  NodeCheckResults results;  // each check's last result, for the metrics
};

struct HealthBook {
  std::map<std::string, NodeStanding> nodes;  // by node name
  std::map<std::string, GpuRecord> gpus;    // by serial, else UUID
  std::map<std::string, std::string> uuid_to_key;
  std::map<std::string, NodeRecord> hosts;  // by node name

  // The key of a GPU: its serial, else its UUID; "" when it has neither.
  static std::string KeyOf(const std::string& serial, const std::string& uuid);
};

nlohmann::json FailureJson(const HealthFailure& f);
nlohmann::json GpuRecordJson(const GpuRecord& g);
nlohmann::json NodeRecordJson(const NodeRecord& n);
Result<GpuRecord> GpuRecordFromJson(const std::string& text);
Result<NodeRecord> NodeRecordFromJson(const std::string& text);

}  // namespace lockstep::controller
