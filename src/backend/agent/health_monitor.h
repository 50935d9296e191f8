// The agent's health checker (docs/health.md): every interval, a full round per node (NVML's
// GPU conditions and the site's health program), and XIDs as they come; each becomes a report
// to lockstepd (POST /api/v1/agent/health), which classifies, drains and resumes. Reports that
// cannot be delivered are kept (up to a bound) and sent with the next, so an XID is not lost to
// a restart of lockstepd.
//
// Settings come from lockstepd (the cluster YAML's `health:` section, sent to the agent when it
// registers), so every node of a cluster checks alike.
//
// Thread-safety: Configure, Stop and the constructor's callbacks may be called from any thread.
// Ownership: owns its two threads and the NVML handle; `busy` must stay callable until Stop.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "backend/agent/nvml_health.h"
#include "backend/agent/storage_mounts.h"
#include "backend/health.h"
#include "client/api_client.h"

namespace lockstep::agent {

// The agent's share of the `health:` section.
struct HealthSettings {
  std::string program;                  // empty: no health program
  std::chrono::seconds interval{60};    // between full rounds (HealthCheckInterval)
  std::chrono::seconds timeout{60};     // a program running longer reads as unknown
  // Slurm's HealthCheckNodeState: ANY, IDLE, ALLOC, MIXED, NONDRAINED_IDLE (idle here; the
  // agent does not know drains), and CYCLE (the nodes one after another over the interval).
  bool run_idle = true, run_busy = true, cycle = false;
  // Each node's configured GPU count (the cluster's), which NVML's count is checked against;
  // a node not named: the count the agent started with.
  std::map<std::string, int> configured_gpus;
  // The shared file systems of this agent's nodes (storage_mounts.h): mounted, checked every
  // round (a "storage" finding per node that gets one that fails), unmounted when removed.
  std::vector<StorageMount> storage;
  std::string storage_key;  // the storage list as sent: a change starts a round at once
};

// Decodes the "health" command's settings; an error names the field.
Result<HealthSettings> DecodeHealthSettings(const nlohmann::json& command);

// What a monitor checks. An agent that launches checks everything of its nodes; on Kubernetes,
// where jobs are pods, two DaemonSets share the work, and each full round says which checks it
// covers (NodeHealthReport::checks), so that one's round never clears the other's findings.
enum class HealthScope {
  kAll,         // the node checks and the shared file systems (bare hosts)
  kNodeChecks,  // NVML and the health program only (--health-only)
  kStorage,     // the shared file systems only: mounted, checked, unmounted (--mounts-only)
};

struct HealthNode {
  std::string name;
  int configured_gpus = 0;  // NVML's count is checked against it (0: not checked)
  bool nvml = false;        // its GPUs are this host's, seen through NVML
};

class HealthMonitor {
 public:
  // `busy(node)`: whether jobs run on the node now (for node_states).
  // `host_root`: where this host's `/` is seen ("" for `/` itself; the mounts-only DaemonSet's
  // /host): storage paths and bind sources are taken under it.
  HealthMonitor(std::string agent, std::string server, std::vector<HealthNode> nodes,
                std::function<bool(const std::string&)> busy, HealthScope scope = HealthScope::kAll,
                std::string host_root = "");
  ~HealthMonitor();  // stops
  // Starts checking with these settings, or changes them.
  void Configure(const HealthSettings& settings);
  // What is wrong with the shared file systems `node` gets ("" when nothing, or when no storage
  // is declared), as the last round found; waits up to `wait` for the first round of the
  // current storage list. A batch step does not start on a node with a problem.
  std::string StorageProblem(const std::string& node, std::chrono::milliseconds wait);
  void Stop();

 private:
  void RoundLoop();
  void XidLoop();
  backend::NodeHealthReport Round(const HealthNode& node, const HealthSettings& settings,
                                  bool run_program);
  // Mounts what is declared and missing, unmounts what was removed once none of its nodes runs
  // a job, and checks each file system once for the whole host: the findings, by node.
  std::map<std::string, std::vector<backend::HealthFinding>> StorageRound(
      const HealthSettings& settings);
  // Mount points this monitor mounted, with the nodes that got them (only the round thread).
  std::map<std::string, StorageMount> mounted_;
  // Queues `reports` and sends everything queued; kept for the next call when lockstepd does
  // not take them.
  void Send(std::vector<backend::NodeHealthReport> reports);

  const std::string agent_;
  const HealthScope scope_;
  const std::string host_root_;
  std::vector<HealthNode> nodes_;
  std::function<bool(const std::string&)> busy_;
  std::unique_ptr<NvmlHealth> nvml_;  // null: no NVML on this host
  client::ApiClient client_;

  std::mutex mu_;
  std::condition_variable changed_;
  bool stopping_ = false;                  // guarded by mu_
  std::optional<HealthSettings> settings_;  // guarded by mu_: none until lockstepd sends them
  // The storage list last checked (its key) and what it found by node; guarded by mu_.
  std::string storage_checked_;
  std::map<std::string, std::string> storage_problems_;
  std::mutex send_mu_;                     // one sender at a time, in order
  std::deque<nlohmann::json> unsent_;      // guarded by send_mu_
  std::thread rounds_;
  std::thread xids_;
};

}  // namespace lockstep::agent
