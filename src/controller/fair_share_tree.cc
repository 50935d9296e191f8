#include "controller/fair_share_tree.h"

#include <algorithm>

#include "engine/fairshare.h"

namespace lockstep::controller {
namespace {

class TreeRows {
 public:
  TreeRows(const std::vector<engine::Account>& accounts,
           const std::vector<engine::Association>& assocs, const std::vector<std::string>& users)
      : accounts_(accounts), assocs_(assocs), users_(users),
        factors_(engine::FairTreeFactors(accounts, assocs)),
        child_accounts_(accounts.size()), child_assocs_(accounts.size()),
        usage_(accounts.size(), 0.0) {
    for (std::uint32_t a = 1; a < accounts.size(); ++a)
      child_accounts_[ParentOf(a)].push_back(a);
    for (std::uint32_t u = 0; u < assocs.size(); ++u) child_assocs_[AccountOf(u)].push_back(u);
    auto by_account_name = [&](std::uint32_t x, std::uint32_t y) {
      return accounts_[x].name < accounts_[y].name;
    };
    auto by_user_name = [&](std::uint32_t x, std::uint32_t y) { return UserName(x) < UserName(y); };
    for (auto& c : child_accounts_) std::sort(c.begin(), c.end(), by_account_name);
    for (auto& c : child_assocs_) std::sort(c.begin(), c.end(), by_user_name);
    if (!accounts.empty()) SumUsage(0);
  }

  std::vector<ShareRow> Rows() {
    if (accounts_.empty()) return {};
    ShareRow root;
    root.account = accounts_[0].name;
    root.raw_usage = usage_[0];
    root.norm_usage = usage_[0] > 0 ? 1.0 : 0.0;
    root.effective_usage = 1.0;
    root.norm_shares = 0;
    root.raw_shares = accounts_[0].shares;
    rows_.push_back(root);
    Visit(0, 1);
    return std::move(rows_);
  }

 private:
  std::uint32_t ParentOf(std::uint32_t a) const {
    return accounts_[a].parent < accounts_.size() ? accounts_[a].parent : 0;
  }
  std::uint32_t AccountOf(std::uint32_t u) const {
    return assocs_[u].account < accounts_.size() ? assocs_[u].account : 0;
  }
  std::string UserName(std::uint32_t u) const {
    const std::uint32_t uid = assocs_[u].user;
    return uid < users_.size() ? users_[uid] : std::to_string(uid);
  }
  double SumUsage(std::uint32_t a) {
    double sum = 0;
    for (std::uint32_t c : child_accounts_[a]) sum += SumUsage(c);
    for (std::uint32_t u : child_assocs_[a]) sum += assocs_[u].usage;
    return usage_[a] = sum;
  }

  // Rows of the children of `a`, at `depth`: users first, then accounts and their subtrees.
  void Visit(std::uint32_t a, std::uint32_t depth) {
    double level_shares = 0;
    for (std::uint32_t c : child_accounts_[a]) level_shares += accounts_[c].shares;
    for (std::uint32_t u : child_assocs_[a]) level_shares += assocs_[u].shares;
    auto fill = [&](ShareRow& r, std::uint32_t shares, double usage) {
      r.parent = accounts_[a].name;
      r.depth = depth;
      r.raw_shares = shares;
      r.norm_shares = level_shares > 0 ? shares / level_shares : 0;
      r.raw_usage = usage;
      r.norm_usage = usage_[0] > 0 ? usage / usage_[0] : 0;
      r.effective_usage = usage_[a] > 0 ? usage / usage_[a] : 0;
      if (r.effective_usage > 0) r.level_fs = r.norm_shares / r.effective_usage;
    };
    for (std::uint32_t u : child_assocs_[a]) {
      ShareRow r;
      r.account = accounts_[a].name;
      r.user = UserName(u);
      fill(r, assocs_[u].shares, assocs_[u].usage);
      r.fairshare = factors_[u];
      rows_.push_back(std::move(r));
    }
    for (std::uint32_t c : child_accounts_[a]) {
      ShareRow r;
      r.account = accounts_[c].name;
      fill(r, accounts_[c].shares, usage_[c]);
      rows_.push_back(std::move(r));
      Visit(c, depth + 1);
    }
  }

  const std::vector<engine::Account>& accounts_;
  const std::vector<engine::Association>& assocs_;
  const std::vector<std::string>& users_;
  std::vector<double> factors_;
  std::vector<std::vector<std::uint32_t>> child_accounts_, child_assocs_;
  std::vector<double> usage_;  // per account, its subtree's
  std::vector<ShareRow> rows_;
};

}  // namespace

std::vector<ShareRow> FairShareTree(const std::vector<engine::Account>& accounts,
                                    const std::vector<engine::Association>& associations,
                                    const std::vector<std::string>& users) {
  return TreeRows(accounts, associations, users).Rows();
}

}  // namespace lockstep::controller
