// GET /api/v1/sdiag: the scheduler's statistics as JSON, with the fields of Slurm's sdiag
// (docs/api.md); `lockstep sdiag` prints them as sdiag does.
#pragma once

#include <nlohmann/json.hpp>

#include "controller/metrics_view.h"
#include "controller/sched_stats.h"

namespace lockstep::controller {

nlohmann::json SdiagJson(const StatsReading& stats, const MetricsView& now);

}  // namespace lockstep::controller
