#include "engine/fairshare.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lockstep::engine {
namespace {

// A child of an account in the fair-share tree: another account or a user association.
struct TreeChild {
  bool is_account = false;
  std::uint32_t index = 0;
  double level_fairshare = 0;
};

class FairTreeWalk {
 public:
  FairTreeWalk(const std::vector<Account>& accounts, const std::vector<Association>& assocs)
      : accounts_(accounts), assocs_(assocs), factors_(assocs.size(), 0.0) {
    child_accounts_.resize(accounts.size());
    child_assocs_.resize(accounts.size());
    for (std::uint32_t a = 1; a < accounts.size(); ++a) {
      std::uint32_t parent = accounts[a].parent < accounts.size() ? accounts[a].parent : 0;
      child_accounts_[parent].push_back(a);
    }
    for (std::uint32_t u = 0; u < assocs.size(); ++u) {
      std::uint32_t acct = assocs[u].account < accounts.size() ? assocs[u].account : 0;
      child_assocs_[acct].push_back(u);
    }
    account_usage_.assign(accounts.size(), -1.0);
  }

  std::vector<double> Run() {
    if (accounts_.empty() || assocs_.empty()) return factors_;
    rank_ = static_cast<double>(assocs_.size());
    Visit(0);
    return std::move(factors_);
  }

 private:
  double AccountUsage(std::uint32_t a) {
    if (account_usage_[a] >= 0) return account_usage_[a];
    double u = 0;
    for (auto c : child_accounts_[a]) u += AccountUsage(c);
    for (auto s : child_assocs_[a]) u += assocs_[s].usage;
    return account_usage_[a] = u;
  }

  void Visit(std::uint32_t account) {
    std::vector<TreeChild> children;
    double total_shares = 0, total_usage = 0;
    for (auto c : child_accounts_[account]) {
      children.push_back({true, c, 0});
      total_shares += accounts_[c].shares;
      total_usage += AccountUsage(c);
    }
    for (auto s : child_assocs_[account]) {
      children.push_back({false, s, 0});
      total_shares += assocs_[s].shares;
      total_usage += assocs_[s].usage;
    }
    for (auto& c : children) {
      double shares = c.is_account ? accounts_[c.index].shares : assocs_[c.index].shares;
      double usage = c.is_account ? AccountUsage(c.index) : assocs_[c.index].usage;
      double s = total_shares > 0 ? shares / total_shares : 0;
      double u = total_usage > 0 ? usage / total_usage : 0;
      c.level_fairshare = u > 0 ? s / u : std::numeric_limits<double>::infinity();
    }
    // Highest Level Fairshare first; ties keep configuration order (accounts, then users).
    std::stable_sort(children.begin(), children.end(), [](const TreeChild& a, const TreeChild& b) {
      return a.level_fairshare > b.level_fairshare;
    });
    for (std::size_t i = 0; i < children.size(); ++i) {
      const TreeChild& c = children[i];
      if (c.is_account) {
        Visit(c.index);
        continue;
      }
      // Users tied on Level Fairshare with the previous sibling user share its rank.
      bool tied = i > 0 && !children[i - 1].is_account &&
                  children[i - 1].level_fairshare == c.level_fairshare;
      if (tied) {
        factors_[c.index] = factors_[children[i - 1].index];
      } else {
        factors_[c.index] = rank_ / static_cast<double>(assocs_.size());
      }
      rank_ -= 1;
    }
  }

  const std::vector<Account>& accounts_;
  const std::vector<Association>& assocs_;
  std::vector<double> factors_;
  std::vector<std::vector<std::uint32_t>> child_accounts_;
  std::vector<std::vector<std::uint32_t>> child_assocs_;
  std::vector<double> account_usage_;
  double rank_ = 0;
};

}  // namespace

std::vector<double> FairTreeFactors(const std::vector<Account>& accounts,
                                    const std::vector<Association>& associations) {
  return FairTreeWalk(accounts, associations).Run();
}

double DecayUsage(double usage, Seconds elapsed, Seconds half_life) {
  if (half_life <= 0 || elapsed <= 0) return usage;
  return usage * std::exp2(-static_cast<double>(elapsed) / static_cast<double>(half_life));
}

}  // namespace lockstep::engine
