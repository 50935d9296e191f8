// Pieces shared by accounts_admin.cc, accounts_admin_qos.cc and accounts_admin_assoc.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "controller/accounts_admin.h"

namespace lockstep::controller::accounts_internal {

// The one cluster lockstepd runs, as sacctmgr's Cluster column names it.
inline constexpr const char* kClusterName = "lockstep";

std::string Lower(std::string s);
std::vector<std::string> SplitList(const std::string& text);  // "a,b" -> {a, b}, empties dropped
// A count limit: 0..2^31-1, or -1 (clear).
Result<std::int64_t> ParseCount(const std::string& key, const std::string& text);
// A running-job count limit (GrpJobs, MaxJobs, ...): a number, or -1 for none.
Status ParseJobLimit(const std::string& key, const std::string& text, std::int64_t& limit);
// "cpu=4,mem=10G,node=2,gres/gpu=8" merged into `t`; an item's -1, or the whole "-1", clears.
Status ParseTres(const std::string& key, const std::string& text, engine::TresLimit& t);
Result<std::uint32_t> ParseShares(const std::string& text);  // >= 1; -1 means 1
Status CheckName(const std::string& what, const std::string& name);

Result<AccountsReport> ApplyQosChange(const AccountsChange& c, config::ClusterConfig& cluster,
                                      AccountsExtras& extras, const ActiveUse& active);
Result<AccountsReport> ApplyAccountChange(const AccountsChange& c, config::ClusterConfig& cluster,
                                          AccountsExtras& extras, const ActiveUse& active);
Result<AccountsReport> ApplyUserChange(const AccountsChange& c, config::ClusterConfig& cluster,
                                       AccountsExtras& extras, const ActiveUse& active);

}  // namespace lockstep::controller::accounts_internal
