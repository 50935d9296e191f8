// The observability routes (docs/observability.md): the metrics (/metrics and Slurm's split
// endpoints), the event stream (GET /api/v1/events) and the scheduler's statistics
// (GET /api/v1/sdiag). ApiService serves them to authenticated callers (the Unix socket, or a
// bearer token on TCP); the metrics-only listener (--metrics-listen) serves the metrics alone.
#pragma once

#include <functional>
#include <vector>

#include "controller/api_routes.h"
#include "controller/controller.h"
#include "controller/metrics_view.h"

namespace lockstep::controller {

// What the controller cannot know: the agents' heartbeats (lockstepd asks its agents' backend).
struct ObserveSources {
  std::function<std::vector<AgentHeartbeat>()> agent_heartbeats;  // may be empty
  // Prometheus text appended to /metrics (the admission policy's decisions); may be empty.
  std::function<std::string()> extra_metrics;
};

// The metrics at `path` ("/metrics", "/metrics/nodes", ...), or nullopt when `path` is not a
// metrics endpoint. Only GET (and HEAD) are answered; another method is 405.
std::optional<ApiResponse> MetricsResponse(const Controller& c, const ObserveSources& sources,
                                           boost::beast::http::verb verb, std::string_view path);

// Answers `request` through `reply` when it is an observability route of the API and returns
// true; false leaves it to HandleRequest. The event stream's long poll holds no thread.
bool HandleObserveRequest(Controller& c, const ObserveSources& sources, const Caller& caller,
                          const boost::beast::http::request<boost::beast::http::string_body>& req,
                          Replier& reply);

}  // namespace lockstep::controller
