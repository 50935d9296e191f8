// The agents' HTTP endpoints (controller/api_routes.h: AgentEndpoints) served by the agents'
// backend: the one adapter between the two, here where lockstepd composes them (the controller
// never depends on a backend), for lockstepd and the fuzz target of its routes.
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "backend/agent/agent_backend.h"
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

 private:
  agent::AgentBackend& agents_;
};

}  // namespace lockstep::lockstepd
