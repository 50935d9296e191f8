// sdiag's report (Slurm 22.05's layout) from GET /api/v1/sdiag (docs/api.md): jobs submitted,
// started and ended since lockstepd started, the main (quick, on events) and backfill (full,
// periodic) scheduling cycles, and the API's requests by type and by user.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace lockstep::cli {

std::string FormatSdiag(const nlohmann::json& sdiag);

}  // namespace lockstep::cli
