// Routing of the REST API: one HTTP request in, one response out (docs/api.md).
#pragma once

#include <boost/beast/http.hpp>

#include "controller/controller.h"
#include "controller/tokens.h"

namespace lockstep::controller {

// The agents' endpoints (/api/v1/agent/...), served by the agents' backend; lockstepd adapts
// it (src/lockstepd), so that the controller never depends on a backend. Bodies are checked
// whole by the implementation; Poll waits up to `wait`.
class AgentEndpoints {
 public:
  virtual ~AgentEndpoints() = default;
  virtual Status Register(const nlohmann::json& body) = 0;
  virtual nlohmann::json Poll(const std::string& agent, std::chrono::milliseconds wait) = 0;
  virtual Status Events(const nlohmann::json& body) = 0;
  virtual Status Output(const nlohmann::json& body) = 0;
};

// `agents` may be null (no agents: /api/v1/agent answers 404).
boost::beast::http::response<boost::beast::http::string_body> HandleRequest(
    Controller& controller, AgentEndpoints* agents, const Caller& caller,
    const boost::beast::http::request<boost::beast::http::string_body>& request);

// POST /api/v1/tokens {"user": NAME, "lifespan": SECONDS} (both optional): a new bearer token
// for the caller, or for NAME when the caller is an operator (docs/api.md). ApiService sends it
// only requests from its Unix socket.
boost::beast::http::response<boost::beast::http::string_body> HandleTokenRequest(
    Controller& controller, TokenRegistry& tokens, const Caller& caller,
    const boost::beast::http::request<boost::beast::http::string_body>& request, Time now);

}  // namespace lockstep::controller
