// The fair-share tree as Slurm's sshare shows it under Fair Tree (docs/observability.md,
// "Fair share"): every account and user association, depth first, with its raw and normalized
// shares, raw, normalized and effective usage, Level Fairshare and, for users, the fair-share
// factor. The factor is the engine's own (engine::FairTreeFactors, the one sprio's FAIRSHARE
// is weighted from); the rest is computed here from the same accounts and associations.
// Pure: no state, no locks.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "engine/model.h"

namespace lockstep::controller {

struct ShareRow {
  std::string account;  // the account, or the account of a user's association
  std::string user;     // "" for an account's row
  std::string parent;   // the parent account ("" for the root)
  std::uint32_t depth = 0;  // the root is 0; its children 1; a user is one below its account
  std::uint32_t raw_shares = 0;
  double norm_shares = 0;     // its shares over the sum of its siblings' (the root: 0)
  double raw_usage = 0;       // decayed usage; an account's is its subtree's
  double norm_usage = 0;      // over the whole tree's usage
  double effective_usage = 0; // over its parent's usage (the root: 1), Fair Tree's U
  double level_fs = std::numeric_limits<double>::infinity();  // S / U; inf without usage
  double fairshare = -1;      // the user's factor in [0, 1]; -1 for an account
};

// Depth first from the root; under each account its users first (by name), then its accounts
// (by name), as Slurm orders sshare's lines. `users` names the uids of the associations.
std::vector<ShareRow> FairShareTree(const std::vector<engine::Account>& accounts,
                                    const std::vector<engine::Association>& associations,
                                    const std::vector<std::string>& users);

}  // namespace lockstep::controller
