// The agents' HTTP endpoints (controller/api_routes.h: AgentEndpoints) served by the agents'
// backend: the one adapter between the two, here where lockstepd composes them (the controller
// never depends on a backend), for lockstepd and the fuzz target of its routes.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "backend/agent/agent_backend.h"
#include "config/cluster_config.h"
#include "config/health_config.h"
#include "controller/api_routes.h"

namespace lockstep::lockstepd {

class AgentEndpointsOf : public controller::AgentEndpoints {
 public:
  explicit AgentEndpointsOf(agent::AgentBackend& agents) : agents_(agents) {}
  Status Register(const nlohmann::json& body) override;
  void Poll(const std::string& agent, std::chrono::milliseconds wait,
            std::function<void(nlohmann::json)> done) override;
  Status Events(const nlohmann::json& body) override;
  Status Output(const nlohmann::json& body) override;
  Status Health(const nlohmann::json& body) override;

 private:
  agent::AgentBackend& agents_;
};

// The "health" command every agent gets when it registers: the agents' share of the cluster's
// `health:` section (backend/agent/health_monitor.h decodes it).
// `configured_gpus`: each node's configured GPU count, which NVML's count is checked against.
// `storage`: AgentStorageSettings of the cluster.
nlohmann::json AgentHealthSettings(const config::HealthConfig& health,
                                   const std::map<std::string, int>& configured_gpus,
                                   const nlohmann::json& storage = nlohmann::json::array());

// The cluster's shared file systems as the agents mount and check them: for each, how to mount
// it, where, and which of the cluster's nodes get it (backend/agent/storage_mounts.h).
nlohmann::json AgentStorageSettings(const config::ClusterConfig& cluster);

}  // namespace lockstep::lockstepd
