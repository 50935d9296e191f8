// sacctmgr's view and changes of lockstep's accounts, users (associations) and QoS, as pure
// functions over the cluster's tables (docs/commands.md, "sacctmgr").
//
// A change is decoded and checked first, then applied to the tables it is given; the controller
// passes copies and keeps them only when the whole change succeeded, so a bad request changes
// nothing. Every committed change is stored (table "sacctmgr") and replayed in order over the
// cluster YAML when lockstepd starts: the YAML stays the starting point.
//
// Plain values and free functions; not thread-safe (the controller calls them under its lock).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "config/cluster_config.h"

namespace lockstep::controller {

// What Slurm's database keeps and the engine does not look at: texts, and the submission limits
// that the controller enforces itself when a job is submitted. By name, so that deletions do not
// shift them.
struct AccountsExtras {
  std::map<std::string, std::string> account_description, account_organization;
  std::map<std::string, std::string> qos_description;
  // MaxSubmitJobs of an account's association (the default of its users' associations) and of a
  // user's association in an account; MaxSubmitJobsPerUser of a QoS. Absent: no limit.
  std::map<std::string, std::int64_t> account_max_submit;
  std::map<std::pair<std::string, std::string>, std::int64_t> user_max_submit;  // (user, account)
  std::map<std::string, std::int64_t> qos_max_submit_per_user;
};

// What pending and running jobs use: such accounts, users' associations and QoS are not deleted
// (Slurm's "Job(s) active, cancel job(s) before remove").
struct ActiveUse {
  std::set<std::string> accounts, qos;
  std::set<std::pair<std::string, std::string>> associations;  // (user, account)
};

// One sacctmgr command that changes something, as the CLI sends it:
//   {"action": "add"|"modify"|"delete", "entity": "account"|"user"|"qos",
//    "names": [...], "where": {"key": "value", ...}, "set": {"key": "value", ...}}
// Keys are Slurm's option names in any case ("GrpTRES", "fairshare"); values are the text the
// user typed ("gres/gpu=8", "2-00:00:00", "-1" to clear a limit).
struct AccountsChange {
  enum class Action : std::uint8_t { kAdd, kModify, kDelete };
  enum class Entity : std::uint8_t { kAccount, kUser, kQos };
  Action action = Action::kAdd;
  Entity entity = Entity::kAccount;
  std::vector<std::string> names;
  std::map<std::string, std::string> where, set;  // keys lower-cased, canonical
};

Result<AccountsChange> DecodeAccountsChange(const nlohmann::json& request);

// What was done, in sacctmgr's words (" Adding Account(s)", "  physics", ...), one line each.
struct AccountsReport {
  std::vector<std::string> lines;
  bool changed = false;  // false: nothing matched or nothing new ("Nothing modified")
};

// Applies `change` to `cluster` (its QoS, accounts, associations, users and default QoS) and
// `extras`. On an error either may be partly changed: pass copies.
Result<AccountsReport> ApplyAccountsChange(const AccountsChange& change, config::ClusterConfig& cluster,
                                           AccountsExtras& extras, const ActiveUse& active);

// The tables as GET /api/v1/accounts answers them (docs/api.md).
nlohmann::json AccountsView(const config::ClusterConfig& cluster, const AccountsExtras& extras);

// The MaxSubmitJobs that binds `user` in `account` with `qos`: the smallest of the association's
// (its own, else its account's) and the QoS's per-user limit; -1 when none.
std::int64_t MaxSubmitFor(const AccountsExtras& extras, const std::string& user,
                          const std::string& account, const std::string& qos);

// A TRES limit in sacctmgr's form: "cpu=4,mem=10G,node=2,gres/gpu=8" (unlimited fields left out).
std::string FormatTresLimit(const engine::TresLimit& t);

}  // namespace lockstep::controller
