// Routing of the REST API: one HTTP request in, one response out, now or later (docs/api.md).
#pragma once

#include <boost/beast/http.hpp>
#include <chrono>
#include <functional>

#include "controller/controller.h"
#include "controller/tokens.h"

namespace lockstep::controller {

// The agents' endpoints (/api/v1/agent/...), served by the agents' backend; lockstepd adapts
// it (src/lockstepd), so that the controller never depends on a backend. Bodies are checked
// whole by the implementation. Poll answers through `done` (once, from any thread, with no
// lock of the caller's held) when commands come or `wait` ends; it never blocks.
class AgentEndpoints {
 public:
  virtual ~AgentEndpoints() = default;
  virtual Status Register(const nlohmann::json& body) = 0;
  virtual void Poll(const std::string& agent, std::chrono::milliseconds wait,
                    std::function<void(nlohmann::json)> done) = 0;
  virtual Status Events(const nlohmann::json& body) = 0;
  virtual Status Output(const nlohmann::json& body) = 0;
  virtual Status Health(const nlohmann::json& body) = 0;  // health reports (docs/health.md)
};

using ApiResponse = boost::beast::http::response<boost::beast::http::string_body>;

// `body` as a JSON response; bytes in its strings that are not UTF-8 (programs' output, names
// from elsewhere) become U+FFFD rather than an error.
ApiResponse JsonResponse(boost::beast::http::status status, const nlohmann::json& body);
// A Status as the API answers it: {"error": message} with 400, 403, 404, 409 or 500.
ApiResponse ErrorResponse(const Status& status);
// Called once with the answer to a request, from any thread.
using Replier = std::function<void(ApiResponse)>;

// Answers `request` through `reply`. Every route answers before returning, except the two long
// polls (an agent's commands, a step's output), which register a waiter with the agents or the
// controller and return: their answer comes when their event does or their wait ends. So
// HandleRequest never blocks for long (it may wait for a store commit), and a long poll holds no
// thread. `agents` may be null (no agents: /api/v1/agent answers 404).
void HandleRequest(Controller& controller, AgentEndpoints* agents, const Caller& caller,
                   const boost::beast::http::request<boost::beast::http::string_body>& request,
                   Replier reply);

// POST /api/v1/tokens {"user": NAME, "lifespan": SECONDS} (both optional): a new bearer token
// for the caller, or for NAME when the caller is an operator (docs/api.md). ApiService sends it
// only requests from its Unix socket.
// `directory`: whom an operator may name (null: the host's users).
boost::beast::http::response<boost::beast::http::string_body> HandleTokenRequest(
    Controller& controller, TokenRegistry& tokens, const Caller& caller,
    const boost::beast::http::request<boost::beast::http::string_body>& request, Time now,
    const identity::UserDirectory* directory = nullptr);

}  // namespace lockstep::controller
