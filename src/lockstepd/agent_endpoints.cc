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

}  // namespace lockstep::lockstepd
