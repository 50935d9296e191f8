// The admission policy's routes (docs/api.md, "Policy"): GET /api/v1/policy/log (operators)
// and POST /api/v1/policy/test (what the policy would decide of a job or a pod).
#pragma once

#include <boost/beast/http.hpp>
#include <functional>

#include "controller/api_routes.h"
#include "controller/controller.h"

namespace lockstep::controller {

struct PolicyEndpoints {
  policy::PolicyGate* gate = nullptr;  // null: no policy (every test allows; no log)
  // A pod's decision, judged as Kubernetes user `as` (the backend's webhook code); empty: pods
  // cannot be tested (no Kubernetes backend).
  std::function<Result<nlohmann::json>(const std::string& as, const nlohmann::json& pod,
                                       const std::string& caller)>
      test_pod;
};

// Answers `request` when it is one of the policy routes (true), else leaves it (false).
bool HandlePolicyRequest(Controller& controller, const PolicyEndpoints& policy,
                         const Caller& caller,
                         const boost::beast::http::request<boost::beast::http::string_body>& request,
                         const Replier& reply);

}  // namespace lockstep::controller
