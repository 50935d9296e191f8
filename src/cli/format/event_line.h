// `lockstep events`' lines: one event of GET /api/v1/events (docs/observability.md) as text,
// "2026-12-02T13:50:00 job 42 ended state=COMPLETED exit_code=0 user=alice ...".
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace lockstep::cli {

std::string FormatEventLine(const nlohmann::json& event);

}  // namespace lockstep::cli
