// lockstepd's metrics as Prometheus text (docs/observability.md): Slurm 25.11's names on its
// split endpoints, so that dashboards built for slurmctld's metrics work unchanged, and
// lockstep's own histograms and GPU gauges beside them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "controller/metrics_view.h"

namespace lockstep::controller {

enum class MetricsEndpoint { kAll, kJobs, kNodes, kPartitions, kScheduler, kJobsUsersAccts };

// The endpoint a path names: "/metrics" is every metric; "/metrics/jobs", "/metrics/nodes",
// "/metrics/partitions", "/metrics/scheduler", "/metrics/jobs-users-accts" are Slurm's parts.
std::optional<MetricsEndpoint> MetricsEndpointOf(std::string_view path);

std::string RenderMetrics(const MetricsView& view, MetricsEndpoint endpoint);

// The Content-Type of the text.
inline constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace lockstep::controller
