// What sreport's usage (sreport_usage.cc) and printing (sreport.cc) share.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/format/sreport.h"

namespace lockstep::cli {

// A field of the API's JSON: text ("" when absent) and number (0 when absent).
std::string SreportStr(const nlohmann::json& j, const char* key);
std::int64_t SreportInt(const nlohmann::json& j, const char* key);

// How many of `tres` a job holds, or a node has; an unknown TRES is an InvalidArgument.
Result<std::int64_t> TresOfJob(const std::string& tres, const nlohmann::json& job);
Result<std::int64_t> TresOfNode(const std::string& tres, const nlohmann::json& node);

// A job's TRES-seconds within the window (count x the part of its run inside it).
std::int64_t JobTresSeconds(const nlohmann::json& job, std::int64_t count, const SreportOptions& o);

}  // namespace lockstep::cli
