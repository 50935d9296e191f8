#include "controller/slurm_routes.h"

#include <charconv>

#include "jobspec/job_spec.h"

namespace lockstep::controller {
namespace {

namespace http = boost::beast::http;

ApiResponse Answer(const Result<nlohmann::json>& r) {
  return r.ok() ? JsonResponse(http::status::ok, *r) : ErrorResponse(r.status());
}

std::optional<ApiResponse> Accounts(Controller& c, const Caller& caller,
                                    const http::request<http::string_body>& req) {
  if (req.method() == http::verb::get) return JsonResponse(http::status::ok, c.AccountsTables());
  if (req.method() != http::verb::post)
    return JsonResponse(http::status::method_not_allowed, {{"error", "GET or POST"}});
  nlohmann::json body = nlohmann::json::parse(req.body(), nullptr, false);
  if (body.is_discarded() || !body.is_object())
    return JsonResponse(http::status::bad_request, {{"error", "the body is not a JSON object"}});
  return Answer(c.ChangeAccounts(caller, body));
}

std::optional<ApiResponse> Reservations(Controller& c, const Caller& caller,
                                        const http::request<http::string_body>& req) {
  if (req.method() == http::verb::get) return JsonResponse(http::status::ok, c.ReservationsView());
  if (req.method() != http::verb::post)
    return JsonResponse(http::status::method_not_allowed, {{"error", "GET or POST"}});
  nlohmann::json body = nlohmann::json::parse(req.body(), nullptr, false);
  if (body.is_discarded() || !body.is_object())
    return JsonResponse(http::status::bad_request, {{"error", "the body is not a JSON object"}});
  return Answer(c.ChangeReservations(caller, body));
}

// "/api/v1/jobs/{id}/script" -> id; 0 when `path` is not that.
JobId ScriptPathId(std::string_view path) {
  constexpr std::string_view kPrefix = "/api/v1/jobs/", kSuffix = "/script";
  if (path.size() <= kPrefix.size() + kSuffix.size() || path.substr(0, kPrefix.size()) != kPrefix ||
      path.substr(path.size() - kSuffix.size()) != kSuffix)
    return 0;
  std::string_view digits = path.substr(kPrefix.size(), path.size() - kPrefix.size() - kSuffix.size());
  JobId id = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  return ec == std::errc() && end == digits.data() + digits.size() ? id : 0;
}

}  // namespace

std::optional<ApiResponse> SlurmCommandsRoute(Controller& c, const Caller& caller,
                                              std::string_view path,
                                              const http::request<http::string_body>& req) {
  if (path == "/api/v1/accounts") return Accounts(c, caller, req);
  if (path == "/api/v1/reservations") return Reservations(c, caller, req);
  if (path == "/api/v1/config" && req.method() == http::verb::get)
    return JsonResponse(http::status::ok, c.ConfigView());
  if (path == "/api/v1/topology" && req.method() == http::verb::get)
    return JsonResponse(http::status::ok, c.TopologyView());
  if (path == "/api/v1/jobs/test" && req.method() == http::verb::post) {
    Result<jobspec::JobSpec> spec = jobspec::JobSpecFromJson(req.body());
    if (!spec.ok()) return ErrorResponse(spec.status());
    return Answer(c.TestOnly(caller, std::move(*spec)));
  }
  if (JobId id = ScriptPathId(path); id != 0 && req.method() == http::verb::get) {
    Result<std::string> script = c.BatchScript(caller, id);
    if (!script.ok()) return ErrorResponse(script.status());
    return JsonResponse(http::status::ok, {{"job_id", id}, {"script", *script}});
  }
  return std::nullopt;
}

}  // namespace lockstep::controller
