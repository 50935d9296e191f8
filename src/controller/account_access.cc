#include "controller/account_access.h"

namespace lockstep::controller {

Status CheckAccountAccess(const config::ClusterConfig& cluster, const std::string& user,
                          const std::string& account) {
  const config::SubmitLimits& limits = cluster.submit_limits;
  if (!limits.enforce_associations) return Status::Ok();
  const std::uint32_t uid = cluster.UserIndex(user);
  const std::uint32_t acct = account.empty() ? engine::kNone : cluster.AccountIndex(account);
  bool has_association = false;
  if (uid != engine::kNone) {
    for (const engine::Association& a : cluster.base.associations) {
      if (a.user != uid) continue;
      if (account.empty() || a.account == acct) return Status::Ok();
      has_association = true;
    }
  }
  // No association of their own: the account "default", where the cluster leaves it open.
  if (!has_association && limits.default_account_open && (account.empty() || account == "default"))
    return Status::Ok();
  return InvalidArgument(kInvalidAccount);
}

std::string DefaultAccountOf(const config::ClusterConfig& cluster, const std::string& user) {
  const std::uint32_t uid = cluster.UserIndex(user);
  if (uid != engine::kNone)
    for (const engine::Association& a : cluster.base.associations)
      if (a.user == uid && a.account < cluster.base.accounts.size())
        return cluster.base.accounts[a.account].name;
  return "default";
}

}  // namespace lockstep::controller
