#include "lockstepd/agent_endpoints.h"

#include <utility>

namespace lockstep::lockstepd {

Status AgentEndpointsOf::Register(const nlohmann::json& body) {
  return agents_.Register(body);
}

void AgentEndpointsOf::Poll(const std::string& agent, std::chrono::milliseconds wait,
                            std::function<void(nlohmann::json)> done) {
  agents_.Poll(agent, wait, std::move(done));
}

Status AgentEndpointsOf::Events(const nlohmann::json& body) {
  return agents_.Events(body);
}

Status AgentEndpointsOf::Output(const nlohmann::json& body) {
  return agents_.Output(body);
}

Status AgentEndpointsOf::Health(const nlohmann::json& body) {
  return agents_.Health(body);
}

nlohmann::json AgentHealthSettings(const config::HealthConfig& health,
                                   const std::map<std::string, int>& configured_gpus,
                                   const nlohmann::json& storage) {
  return {{"type", "health"},
          {"program", health.program},
          {"interval_s", health.interval},
          {"timeout_s", health.timeout},
          {"node_states", health.node_states},
          {"configured_gpus", configured_gpus},
          {"storage", storage}};
}

nlohmann::json AgentStorageSettings(const config::ClusterConfig& cluster) {
  nlohmann::json out = nlohmann::json::array();
  const std::vector<std::vector<std::string>> nodes = cluster.StorageNodes();
  for (std::size_t i = 0; i < cluster.storage.size(); ++i) {
    const config::FileSystem& fs = cluster.storage[i];
    out.push_back({{"name", fs.DisplayName()},
                   {"kind", config::FileSystemKindName(fs.kind)},
                   {"source", fs.source},
                   {"options", fs.options},
                   {"path", fs.MountPoint()},
                   {"read_only", fs.read_only},
                   {"timeout_s", fs.timeout},
                   {"nodes", nodes[i]},
                   // Every node, those that come later too (Kubernetes' Nodes).
                   {"all_nodes", fs.partitions.empty() && fs.nodes.empty()}});
  }
  return out;
}

}  // namespace lockstep::lockstepd
