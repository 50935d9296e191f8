#include "controller/web_routes.h"

#include <charconv>
#include <string>

namespace lockstep::controller {
namespace {

namespace http = boost::beast::http;

// The last `max` bytes of `text`, from a line's start when there is one.
std::string Tail(const std::string& text, std::size_t max) {
  if (text.size() <= max) return text;
  std::string t = text.substr(text.size() - max);
  std::size_t nl = t.find('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

ApiResponse JobDetails(Controller& c, const Caller& caller, JobId id) {
  Result<nlohmann::json> job = c.JobRecord(id);  // a job purged after MinJobAge too
  if (!job.ok()) return JsonResponse(http::status::not_found, {{"error", job.status().message()}});
  const bool mine = (*job).value("uid", std::uint32_t{0xFFFFFFFF}) == caller.uid;
  if (!mine && !c.IsOperator(caller.uid))
    return JsonResponse(http::status::forbidden,
                {{"error", "job " + std::to_string(id) + " belongs to " +
                               (*job).value("user", std::string("another user")) +
                               ": only its owner and operators see its details"}});
  nlohmann::json out = {{"job", *job}};
  if (Result<nlohmann::json> why = c.Why(id); why.ok()) out["why"] = *why;
  for (const nlohmann::json& p : c.Priorities().value("priorities", nlohmann::json::array()))
    if (p.value("job_id", JobId{0}) == id) out["priority"] = p;
  if ((*job).value("start_time", 0) > 0) {
    Result<std::string> logs = c.JobLogs(caller, id);
    out["output_tail"] = logs.ok() ? Tail(*logs, 4096) : "";
    if (!logs.ok()) out["output_error"] = logs.status().message();
  }
  return JsonResponse(http::status::ok, out);
}

}  // namespace

bool HandleWebRequest(Controller& c, const Caller& caller,
                      const http::request<http::string_body>& req, Replier& reply) {
  std::string_view target(req.target().data(), req.target().size());
  std::string_view path = target.substr(0, target.find('?'));
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (req.method() != http::verb::get) return false;
  if (path == "/web" || path == "/") {
    ApiResponse res{http::status::ok, 11};
    res.set(http::field::content_type, "text/html; charset=utf-8");
    // Nothing from elsewhere: no script, style, font or image outside the page.
    res.set("Content-Security-Policy",
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
            "connect-src 'self'; img-src 'self' data:");
    res.body() = WebPage();
    res.prepare_payload();
    reply(std::move(res));
    return true;
  }
  if (path == "/api/v1/web/whoami") {
    reply(
        JsonResponse(http::status::ok,
             {{"user", caller.user}, {"uid", caller.uid}, {"operator", c.IsOperator(caller.uid)}}));
    return true;
  }
  constexpr std::string_view kJobs = "/api/v1/web/jobs/";
  if (path.starts_with(kJobs)) {
    std::string_view digits = path.substr(kJobs.size());
    JobId id = 0;
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), id);
    if (r.ec != std::errc() || r.ptr != digits.data() + digits.size())
      reply(JsonResponse(http::status::bad_request, {{"error", "invalid job id specified"}}));
    else
      reply(JobDetails(c, caller, id));
    return true;
  }
  return false;
}

}  // namespace lockstep::controller
