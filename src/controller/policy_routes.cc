#include "controller/policy_routes.h"

#include <charconv>

#include "jobspec/job_spec.h"
#include "policy/policy_gate.h"

namespace lockstep::controller {
namespace {

namespace http = boost::beast::http;
using Json = nlohmann::json;

constexpr std::string_view kLog = "/api/v1/policy/log";
constexpr std::string_view kTest = "/api/v1/policy/test";

// "lines=N" of the query (1 to 100000), 100 when absent.
Result<std::size_t> LinesOf(std::string_view query) {
  constexpr std::string_view kKey = "lines=";
  for (std::size_t at = 0; at < query.size();) {
    std::size_t amp = std::min(query.find('&', at), query.size());
    std::string_view kv = query.substr(at, amp - at);
    if (kv.substr(0, kKey.size()) == kKey) {
      std::size_t v = 0;
      std::string_view n = kv.substr(kKey.size());
      auto r = std::from_chars(n.data(), n.data() + n.size(), v);
      if (r.ec != std::errc() || r.ptr != n.data() + n.size() || v < 1 || v > 100000)
        return InvalidArgument("lines: not a number from 1 to 100000");
      return v;
    }
    at = amp + 1;
  }
  return std::size_t{100};
}

Result<Json> Log(Controller& c, const PolicyEndpoints& p, const Caller& caller,
                 std::string_view query) {
  if (!c.IsOperator(caller.uid))
    return PermissionDenied("the policy's audit log is for operators only");
  Result<std::size_t> lines = LinesOf(query);
  if (!lines.ok()) return lines.status();
  Json out = {{"lines", Json::array()}};
  if (!p.gate) return out;
  for (const std::string& l : p.gate->AuditTail(*lines)) {
    Json j = Json::parse(l, nullptr, false);
    out["lines"].push_back(j.is_discarded() ? Json(l) : j);
  }
  return out;
}

Result<Json> Test(Controller& c, const PolicyEndpoints& p, const Caller& caller,
                  const std::string& body_text) {
  Json body = Json::parse(body_text, nullptr, false);
  if (body.is_discarded() || !body.is_object())
    return InvalidArgument("the request body must be a JSON object {user, job | pod}");
  if (body.contains("user") && !body["user"].is_string())
    return InvalidArgument("user: must be a string");
  const std::string as = body.value("user", caller.user);
  if (body.contains("pod") == body.contains("job"))
    return InvalidArgument("name either job (a job's spec) or pod (a Pod object)");
  if (body.contains("pod")) {
    if (!body["pod"].is_object()) return InvalidArgument("pod: must be a Pod object");
    if (!c.IsOperator(caller.uid) && as != caller.user)
      return PermissionDenied("only an operator may ask what the policy decides for another user");
    if (!p.test_pod) return FailedPrecondition("pods are judged only with the Kubernetes backend");
    return p.test_pod(as, body["pod"], caller.user);
  }
  Result<jobspec::JobSpec> spec = jobspec::JobSpecFromJson(body["job"].dump());
  if (!spec.ok()) return spec.status();
  return c.TestJobPolicy(caller, as, std::move(*spec));
}

}  // namespace

bool HandlePolicyRequest(Controller& controller, const PolicyEndpoints& policy,
                         const Caller& caller, const http::request<http::string_body>& req,
                         const Replier& reply) {
  std::string_view target(req.target().data(), req.target().size());
  const std::size_t q = target.find('?');
  const std::string_view path = target.substr(0, q);
  const std::string_view query = q == std::string_view::npos ? "" : target.substr(q + 1);
  Result<Json> r = InvalidArgument("");
  if (path == kLog && req.method() == http::verb::get) {
    r = Log(controller, policy, caller, query);
  } else if (path == kTest && req.method() == http::verb::post) {
    r = Test(controller, policy, caller, req.body());
  } else {
    return false;
  }
  reply(r.ok() ? JsonResponse(http::status::ok, *r) : ErrorResponse(r.status()));
  return true;
}

}  // namespace lockstep::controller
