#include "lockstepd/observe_wiring.h"

#include "server/listen.h"

namespace lockstep::lockstepd {

std::function<std::vector<controller::AgentHeartbeat>()> AgentHeartbeatsOf(
    agent::AgentBackend& agents) {
  return [&agents] {
    std::vector<controller::AgentHeartbeat> out;
    for (auto& [name, age] : agents.HeartbeatAges()) out.push_back({name, age});
    return out;
  };
}

Status CheckMetricsListen(const std::string& listen) {
  Result<std::pair<std::string, std::string>> split = server::SplitHostPort(listen);
  if (!split.ok())
    return InvalidArgument("--metrics-listen " + listen + ": expected HOST:PORT or [V6]:PORT");
  return Status::Ok();
}

Result<std::unique_ptr<server::MetricsListener>> StartMetricsListener(
    const std::string& listen, const controller::Controller& c,
    const controller::ObserveSources& sources) {
  server::MetricsListener::Options options;
  options.listen = listen;
  return server::MetricsListener::Start(
      options, [&c, sources](const server::Request& req) -> server::Response {
        std::string_view target(req.target().data(), req.target().size());
        std::optional<server::Response> r =
            controller::MetricsResponse(c, sources, req.method(), target);
        if (r) return std::move(*r);
        return server::JsonError(boost::beast::http::status::not_found,
                                 "only the metrics are served here (/metrics, /metrics/jobs, ...)");
      });
}

}  // namespace lockstep::lockstepd
