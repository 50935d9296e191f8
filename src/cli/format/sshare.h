// sshare's report from the API's fair-share tree (GET /api/v1/shares, docs/api.md), as Slurm
// 22.05 prints it under Fair Tree (src/sshare/process.c, print_fields): Account, User,
// RawShares, NormShares, RawUsage, EffectvUsage, FairShare; -l adds NormUsage, LevelFS,
// GrpTRESMins and TRESRunMins. A pure function; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "common/status.h"

namespace lockstep::cli {

struct SshareOptions {
  bool long_format = false;  // -l
  bool noheader = false;     // -n (and 22.05's -h)
  // 0: fixed-width columns; 1: '|' after every field (-p); 2: '|' between fields (-P).
  int parsable = 0;
  bool users_only = false;        // -U: no account lines
  std::set<std::string> users;    // user lines shown: these (empty: every user, -a)
  std::set<std::string> accounts; // -A: only these accounts' lines and their users' (empty: all)
};

// Formats `shares` ({"shares": [...]} as the API answers) as sshare does: the tree depth first,
// each account indented one space per level, a user's line under its account's name.
// Malformed input is an InvalidArgument.
Result<std::string> FormatSshare(const nlohmann::json& shares, const SshareOptions& options);

}  // namespace lockstep::cli
