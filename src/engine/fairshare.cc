#include "engine/fairshare.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lockstep::engine {
namespace {

// A child of an account in the fair-share tree: another account or a user association, with
// its Level Fairshare among its own siblings.
struct TreeChild {
  bool is_account = false;
  std::uint32_t index = 0;
  double level_fairshare = 0;
};

// Slurm's Fair Tree with its three rules for ties (fair_tree.html, "Ties"): sibling users with
// the same Level Fairshare share a rank; sibling accounts with the same Level Fairshare have their
// children merged and ranked as one list; a user tied with a sibling account shares the rank of
// that account's highest ranked user. Ranks count down from the number of associations, a tie
// keeping the rank and the next user dropping to the rank it would have had without it.
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
    rank_ = rank_untied_ = static_cast<double>(assocs_.size());
    Rank(ChildrenOf(0), /*tied_with_previous=*/false);
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

  // The children of `account`, each with its Level Fairshare among them: normalised shares over
  // normalised usage; infinite without usage, 0 without shares (it ranks last).
  std::vector<TreeChild> ChildrenOf(std::uint32_t account) {
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
      c.level_fairshare = s <= 0 ? 0 : u > 0 ? s / u : std::numeric_limits<double>::infinity();
    }
    return children;
  }

  // Ranks `children` (siblings, or the merged children of tied accounts), highest Level
  // Fairshare first; `tied_with_previous`: the first of them ties with the user ranked last.
  void Rank(std::vector<TreeChild> children, bool tied_with_previous) {
    // On equal values users go before accounts, so that a user tied with an account gets the
    // rank its highest user then shares (Slurm's order); otherwise configuration order.
    std::stable_sort(children.begin(), children.end(), [](const TreeChild& a, const TreeChild& b) {
      if (a.level_fairshare != b.level_fairshare) return a.level_fairshare > b.level_fairshare;
      return !a.is_account && b.is_account;
    });
    for (std::size_t i = 0; i < children.size(); ++i) {
      const TreeChild& c = children[i];
      const bool tied = (i == 0 && tied_with_previous) ||
                        (i > 0 && children[i - 1].level_fairshare == c.level_fairshare);
      if (!c.is_account) {
        if (!tied) rank_ = rank_untied_;
        factors_[c.index] = rank_ / static_cast<double>(assocs_.size());
        rank_untied_ -= 1;
        continue;
      }
      // This account and the accounts tied with it right after: one list of their children.
      std::vector<TreeChild> merged = ChildrenOf(c.index);
      std::size_t j = i + 1;
      for (; j < children.size() && children[j].is_account &&
             children[j].level_fairshare == c.level_fairshare;
           ++j) {
        std::vector<TreeChild> more = ChildrenOf(children[j].index);
        merged.insert(merged.end(), more.begin(), more.end());
      }
      Rank(std::move(merged), tied);
      i = j - 1;
    }
  }

  const std::vector<Account>& accounts_;
  const std::vector<Association>& assocs_;
  std::vector<double> factors_;
  std::vector<std::vector<std::uint32_t>> child_accounts_;
  std::vector<std::vector<std::uint32_t>> child_assocs_;
  std::vector<double> account_usage_;
  double rank_ = 0;          // the rank the last user got
  double rank_untied_ = 0;   // the rank the next user gets unless it ties
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
