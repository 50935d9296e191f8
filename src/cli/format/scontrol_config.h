// scontrol show config as Slurm prints it, from GET /api/v1/config: a dated first line, then
// "Key = Value" lines in key order, keys padded to 23 columns. Pure.
#pragma once

#include <ctime>
#include <nlohmann/json.hpp>
#include <string>

namespace lockstep::cli {

std::string FormatScontrolShowConfig(const nlohmann::json& config, std::time_t now);

}  // namespace lockstep::cli
