// What sreport's usage (sreport_usage.cc) and printing (sreport.cc) share.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

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

// A line of user top: a user (and account, unless grouped) and its TRES-seconds by TRES.
struct UserUsage {
  std::string login;
  std::set<std::string> accounts;
  std::map<std::string, std::int64_t> used;  // "cpu" always, and every TRES of `tres_list`
};

// The users (or user and account pairs) with CPU time in the window, most first (then by name),
// at most TopCount, after users= and accounts=. `tres_list` must be valid TRES names.
std::vector<UserUsage> ComputeUserTop(const nlohmann::json& jobs,
                                      const std::vector<std::string>& tres_list,
                                      const SreportOptions& o);

// What the cluster had of a TRES over the window, up to now: a share's whole.
std::int64_t ClusterTresSeconds(const std::string& tres, const nlohmann::json& nodes,
                                const SreportOptions& o);

}  // namespace lockstep::cli
