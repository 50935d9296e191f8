// lockstepd's wiring of observability: the agents' heartbeats for the metrics, and the
// metrics-only listener (--metrics-listen) over the controller's metrics.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/agent/agent_backend.h"
#include "controller/controller.h"
#include "controller/observe_routes.h"
#include "server/metrics_listener.h"

namespace lockstep::lockstepd {

// The heartbeats of `agents` (borrowed: it must outlive the function's callers).
std::function<std::vector<controller::AgentHeartbeat>()> AgentHeartbeatsOf(
    agent::AgentBackend& agents);

// InvalidArgument naming --metrics-listen unless `listen` is HOST:PORT.
Status CheckMetricsListen(const std::string& listen);

// Plain HTTP on `listen` serving the metrics endpoints only (404 for any other path).
Result<std::unique_ptr<server::MetricsListener>> StartMetricsListener(
    const std::string& listen, const controller::Controller& c,
    const controller::ObserveSources& sources);

}  // namespace lockstep::lockstepd
