// sacctmgr list/show as Slurm prints it, from GET /api/v1/accounts (docs/api.md): the entity's
// rows, filtered by the `where` conditions, in the columns of `format=` (Slurm's default
// columns when none), as a table (right-aligned, "+" where a value is cut), or '|'-separated.
// Pure functions.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep::cli {

struct SacctmgrList {
  enum class Entity : std::uint8_t { kAccount, kUser, kAssociation, kQos, kCluster };
  enum class Parsable : std::uint8_t { kNo, kWithTrailing, kNoTrailing };  // -p, -P
  Entity entity = Entity::kAccount;
  bool with_assoc = false;  // -s, WithAssoc: accounts and users with their associations
  bool noheader = false;    // -n
  Parsable parsable = Parsable::kNo;
  std::vector<std::string> format;  // "User", "Account%20", ...; empty: Slurm's defaults
  std::vector<std::string> names;   // bare words and Name=
  // Conditions, keys lower-cased: account(s), user(s), parent, cluster(s), name(s).
  std::map<std::string, std::vector<std::string>> where;
};

// "accounts", "assoc", "qos", ... -> the entity; false when sacctmgr has no such entity here.
bool ParseSacctmgrEntity(const std::string& word, SacctmgrList::Entity* entity);

// The listing, or InvalidArgument("Unknown field 'X'") for a column it does not know.
Result<std::string> FormatSacctmgrList(const nlohmann::json& tables, const SacctmgrList& list);

}  // namespace lockstep::cli
