// The login routes of the API (docs/api.md, "Login"; docs/login.md), served by the platform's
// login environments: on Kubernetes each user's login pod (backend/kubernetes/login), adapted
// by lockstepd so that the controller depends on no backend.
//
//   GET  /api/v1/login                           how `lockstep login` logs in here
//   POST /api/v1/login                           a session in the caller's login environment
//   POST /api/v1/login/sessions/ID/input         the CLI's input, terminal size
//   GET  /api/v1/login/sessions/ID/output?offset=N   long poll of the output, then the exit
//   POST /api/v1/login/sessions/ID/close         ends the session's command
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "common/caller.h"
#include "common/status.h"

namespace lockstep::controller {

class LoginEndpoints {
 public:
  virtual ~LoginEndpoints() = default;
  // {"mode": "kubernetes"|"hosts", "hosts": [...], "alias": NAME}.
  virtual nlohmann::json Describe() = 0;
  // May block until the environment is ready (a pod starting): routes run on worker threads.
  virtual Result<nlohmann::json> Open(const Caller& caller, bool caller_is_operator,
                                      const nlohmann::json& body) = 0;
  // {"offset": what was taken up to, "closed": the command ended}, as a step's input answers.
  virtual Result<nlohmann::json> Input(const Caller& caller, const std::string& session,
                                       const nlohmann::json& body) = 0;
  // Answers through `done`, once, from any thread; never blocks.
  virtual void Output(const Caller& caller, const std::string& session, std::uint64_t offset,
                      std::function<void(Result<nlohmann::json>)> done) = 0;
  virtual Status Close(const Caller& caller, const std::string& session) = 0;
};

}  // namespace lockstep::controller
