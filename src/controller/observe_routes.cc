#include "controller/observe_routes.h"

#include <charconv>
#include <string>

#include "controller/metrics_text.h"
#include "controller/sdiag_json.h"

namespace lockstep::controller {
namespace {

namespace http = boost::beast::http;

ApiResponse BadRequest(const std::string& what) {
  return JsonResponse(http::status::bad_request, {{"error", what}});
}

// The query parameter `name` of `target` as a number in [lo, hi], `fallback` when absent.
Result<std::int64_t> Param(std::string_view target, std::string_view name, std::int64_t fallback,
                           std::int64_t lo, std::int64_t hi) {
  std::size_t q = target.find('?');
  if (q == std::string_view::npos) return fallback;
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    std::size_t amp = rest.find('&');
    std::string_view kv = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    std::size_t eq = kv.find('=');
    if (kv.substr(0, eq) != name) continue;
    std::string_view text = eq == std::string_view::npos ? "" : kv.substr(eq + 1);
    std::int64_t v = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() || v < lo ||
        v > hi)
      return InvalidArgument(std::string(name) + ": expected a number from " + std::to_string(lo) +
                             " to " + std::to_string(hi));
    return v;
  }
  return fallback;
}

// Another user's job event, without what only its owner and operators may see.
void HideDetails(nlohmann::json& event) {
  for (const char* field : {"name", "nodes", "exit_code", "signal", "reason", "cause_detail"})
    event.erase(field);
}

void Events(Controller& c, const Caller& caller, std::string_view target, Replier& reply) {
  Result<std::int64_t> from = Param(target, "from", 0, 0, INT64_MAX);
  Result<std::int64_t> wait = Param(target, "wait_ms", 0, 0, 30'000);
  Result<std::int64_t> max = Param(target, "max", 1000, 1, 10'000);
  for (const Result<std::int64_t>* r : {&from, &wait, &max})
    if (!r->ok()) return reply(BadRequest(r->status().message()));
  EventLog::Filter filter = [&c, caller](nlohmann::json& e) {
    if (!c.MaySeeDetails(caller, e)) HideDetails(e);
    e.erase("uid");
    return true;
  };
  c.event_log().Read(
      static_cast<std::uint64_t>(*from), static_cast<std::size_t>(*max),
      std::chrono::milliseconds(*wait), std::move(filter),
      [reply = std::move(reply)](EventBatch b) {
        reply(JsonResponse(http::status::ok,
                   {{"events", std::move(b.events)}, {"next", b.next}, {"dropped", b.dropped}}));
      });
}

}  // namespace

std::optional<ApiResponse> MetricsResponse(const Controller& c, const ObserveSources& sources,
                                           http::verb verb, std::string_view path) {
  std::optional<MetricsEndpoint> endpoint = MetricsEndpointOf(path);
  if (!endpoint) return std::nullopt;
  if (verb != http::verb::get && verb != http::verb::head)
    return JsonResponse(http::status::method_not_allowed, {{"error", "metrics: only GET"}});
  MetricsView view = c.Metrics();
  if (sources.agent_heartbeats) view.heartbeats = sources.agent_heartbeats();
  ApiResponse res{http::status::ok, 11};
  res.set(http::field::content_type, std::string(kMetricsContentType));
  res.body() = RenderMetrics(view, *endpoint);
  if (*endpoint == MetricsEndpoint::kAll && sources.extra_metrics) res.body() += sources.extra_metrics();
  res.prepare_payload();
  return res;
}

bool HandleObserveRequest(Controller& c, const ObserveSources& sources, const Caller& caller,
                          const http::request<http::string_body>& req, Replier& reply) {
  std::string_view target(req.target().data(), req.target().size());
  std::string_view path = target.substr(0, target.find('?'));
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (std::optional<ApiResponse> metrics = MetricsResponse(c, sources, req.method(), path)) {
    reply(std::move(*metrics));
    return true;
  }
  if (path == "/api/v1/events" && req.method() == http::verb::get) {
    Events(c, caller, target, reply);
    return true;
  }
  if (path == "/api/v1/shares" && req.method() == http::verb::get) {
    reply(JsonResponse(http::status::ok, c.Shares()));
    return true;
  }
  if (path == "/api/v1/storage" && req.method() == http::verb::get) {
    reply(JsonResponse(http::status::ok, c.StorageView()));
    return true;
  }
  if (path == "/api/v1/qos" && req.method() == http::verb::get) {
    reply(JsonResponse(http::status::ok, c.ListQos()));
    return true;
  }
  if (path == "/api/v1/sdiag" && req.method() == http::verb::get) {
    reply(JsonResponse(http::status::ok, SdiagJson(c.stats().Read(), c.Metrics())));
    return true;
  }
  return false;
}

}  // namespace lockstep::controller
