// Internal to the cluster config: the parser behind ParseClusterConfig(), one method per section
// of the file. Parse() lives in cluster_config.cc, the sections in cluster_config_nodes.cc (nodes,
// topology) and cluster_config_policy.cc (partitions, QoS, accounts, users, scheduler).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "config/cluster_config.h"
#include "config/yaml_reader.h"

namespace lockstep::config {

// Paths the cluster YAML names for lockstepd's files must not depend on its working directory.
inline bool IsAbsolute(const std::string& path) { return !path.empty() && path[0] == '/'; }

// Model records with only their name (and parent) set; the rest keeps the model's defaults.
inline engine::Account MakeAccount(std::string name, std::uint32_t parent) {
  engine::Account a;
  a.name = std::move(name);
  a.parent = parent;
  return a;
}
inline engine::Qos MakeQos(std::string name) {
  engine::Qos q;
  q.name = std::move(name);
  return q;
}

// Builds one ClusterConfig from one YAML document. Single use: construct, Parse(), discard.
class ClusterConfigParser {
 public:
  explicit ClusterConfigParser(std::string_view source_name) : reader_(source_name) {}

  Result<ClusterConfig> Parse(std::string_view yaml_text);
  // Not empty: replaces the file's `backend:` value ("agent" or "kubernetes").
  void OverrideBackend(std::string_view backend) { backend_override_ = backend; }

 private:
  // Sections, in the order Parse() calls them: later ones refer to names of earlier ones.
  void ReadNodes(const YAML::Node& list);
  void ReadNodeGroup(MapView& m);
  // MIG profiles per physical GPU of a node group; empty for a whole GPU.
  std::vector<std::vector<std::string>> ReadMig(MapView& m, int gpus);
  // A node group's devices: each whole GPU, or its MIG slices in its place (index = position).
  std::vector<engine::GpuDevice> GpuDevices(MapView& m, int gpus, const std::string& gpu_type,
                                            const std::vector<std::vector<std::string>>& mig);
  void ReadTopology(const YAML::Node& map);
  void ReadSwitches(const YAML::Node& list);
  void ReadBlocks(const YAML::Node& list);
  void ReadPartitions(const YAML::Node& list);
  void ReadQos(const YAML::Node& list);
  void ReadAccounts(const YAML::Node& list);
  void ReadUsers(const YAML::Node& list);
  void ReadScheduler(const YAML::Node& map);
  void ReadSubmitLimits(MapView& scheduler);
  void ReadKubernetes(const YAML::Node& map);  // cluster_config_kubernetes.cc
  void ReadHealth(const YAML::Node& map);      // cluster_config_health.cc
  void ReadStorage(const YAML::Node& list);    // cluster_config_storage.cc
  void ReadIdentity(const YAML::Node& map);    // cluster_config_login.cc
  void ReadLogin(const YAML::Node& map);       // cluster_config_login.cc (after storage)
  void ReadAdmission(const YAML::Node& map);   // cluster_config_admission.cc
  // `prolog:` or `epilog:` (cluster_config_job_hooks.cc).
  void ReadJobHook(const YAML::Node& node, const std::string& key, JobHook& hook);

  // The index of `name` in `table`, appended when absent.
  static std::uint32_t Intern(std::vector<std::string>& table, std::string_view name);
  // Checks that `name` (from `m`'s `key`) is a plain name: letters, digits and . _ - +.
  static bool CheckName(MapView& m, std::string_view key, std::string_view name);
  // Node indexes of `names` (from `m`'s `key`); an error names the first unknown node.
  std::vector<std::uint32_t> NodeIndexes(MapView& m, std::string_view key,
                                         const std::vector<std::string>& names);

  YamlReader reader_;
  std::string backend_override_;
  ClusterConfig config_;
  std::unordered_map<std::string, std::uint32_t> node_index_;
};

}  // namespace lockstep::config
