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
                                   const std::map<std::string, int>& configured_gpus) {
  return {{"type", "health"},
          {"program", health.program},
          {"interval_s", health.interval},
          {"timeout_s", health.timeout},
          {"node_states", health.node_states},
          {"configured_gpus", configured_gpus}};
}

}  // namespace lockstep::lockstepd
