#include "engine/fairshare.h"

#include <gtest/gtest.h>

namespace lockstep::engine {
namespace {

// Two accounts with equal shares; A has used more, so all of B's users rank above all of A's,
// whatever their own usage (Fair Tree's guarantee).
TEST(FairTree, SiblingAccountsOrderTheirWholeSubtrees) {
  std::vector<Account> accounts = {{"root", kNone, 1, {}}, {"a", 0, 1, {}}, {"b", 0, 1, {}}};
  std::vector<Association> assocs = {
      {1, 1, 1, 100.0},  // a/u1: light user of a heavy account
      {2, 1, 1, 900.0},  // a/u2
      {3, 2, 1, 500.0},  // b/u3: heavy user of a light account
      {4, 2, 1, 10.0},   // b/u4
  };
  std::vector<double> f = FairTreeFactors(accounts, assocs);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_DOUBLE_EQ(f[3], 1.0);   // b/u4 first
  EXPECT_DOUBLE_EQ(f[2], 0.75);  // then b/u3
  EXPECT_DOUBLE_EQ(f[0], 0.5);   // then a/u1
  EXPECT_DOUBLE_EQ(f[1], 0.25);  // a/u2 last
}

TEST(FairTree, SharesWeighUsage) {
  std::vector<Account> accounts = {{"root", kNone, 1, {}}};
  // u1 has 3x the shares and 2x the usage of u2: level fairshare 0.75/0.667 > 0.25/0.333.
  std::vector<Association> assocs = {{1, 0, 3, 200.0}, {2, 0, 1, 100.0}};
  std::vector<double> f = FairTreeFactors(accounts, assocs);
  EXPECT_GT(f[0], f[1]);
}

TEST(FairTree, UnusedAssociationsRankFirstAndTie) {
  std::vector<Account> accounts = {{"root", kNone, 1, {}}};
  std::vector<Association> assocs = {{1, 0, 1, 0.0}, {2, 0, 1, 0.0}, {3, 0, 1, 50.0}};
  std::vector<double> f = FairTreeFactors(accounts, assocs);
  EXPECT_DOUBLE_EQ(f[0], 1.0);
  EXPECT_DOUBLE_EQ(f[1], 1.0);
  EXPECT_LT(f[2], f[0]);
}

// Issue 37: two accounts without usage, a user each, gave FairShare 1.0 and 0.5 (configuration
// order broke the tie). Slurm merges tied sibling accounts' children: both users rank first.
TEST(FairTree, RegressionTiedAccountsMergeTheirChildren) {
  std::vector<Account> accounts = {{"root", kNone, 1, {}}, {"a", 0, 1, {}}, {"b", 0, 1, {}}};
  std::vector<Association> assocs = {{1, 1, 1, 0.0}, {2, 2, 1, 0.0}};
  std::vector<double> f = FairTreeFactors(accounts, assocs);
  EXPECT_DOUBLE_EQ(f[0], 1.0);
  EXPECT_DOUBLE_EQ(f[1], 1.0);
  // Merged, their users are ranked by their own Level Fairshare: a/u1 used its account's
  // whole share, b/u3 half of its own; b/u4 none.
  accounts = {{"root", kNone, 1, {}}, {"a", 0, 1, {}}, {"b", 0, 1, {}}};
  assocs = {{1, 1, 1, 10.0}, {3, 2, 1, 5.0}, {4, 2, 1, 0.0}, {5, 2, 2, 5.0}};
  // a and b each used 10: tied. Merged children: a/u1 LF 1/1 = 1, b/u3 (1/4)/(1/2) = 0.5,
  // b/u4 infinity, b/u5 (2/4)/(1/2) = 1 (tied with a/u1).
  f = FairTreeFactors(accounts, assocs);
  EXPECT_DOUBLE_EQ(f[2], 1.0);   // b/u4 first
  EXPECT_DOUBLE_EQ(f[0], 0.75);  // a/u1 and b/u5 share the next rank
  EXPECT_DOUBLE_EQ(f[3], 0.75);
  EXPECT_DOUBLE_EQ(f[1], 0.25);  // b/u3 drops to the rank it would have had without the tie
}

// A user tied with a sibling account shares the rank of that account's highest ranked user.
TEST(FairTree, AUserTiedWithASiblingAccountSharesItsBestRank) {
  std::vector<Account> accounts = {{"root", kNone, 1, {}}, {"a", 0, 1, {}}};
  // root's children: account a and user u9, equal shares and usage (10 each): tied at 1.
  std::vector<Association> assocs = {{1, 1, 1, 0.0}, {2, 1, 1, 10.0}, {9, 0, 1, 10.0}};
  std::vector<double> f = FairTreeFactors(accounts, assocs);
  EXPECT_DOUBLE_EQ(f[2], 1.0);        // u9 first
  EXPECT_DOUBLE_EQ(f[0], 1.0);        // a/u1 (no usage), a's best, shares u9's rank
  EXPECT_DOUBLE_EQ(f[1], 1.0 / 3);    // a/u2 after them
}

TEST(DecayUsage, HalvesEveryHalfLife) {
  EXPECT_DOUBLE_EQ(DecayUsage(100.0, 3600, 3600), 50.0);
  EXPECT_DOUBLE_EQ(DecayUsage(100.0, 7200, 3600), 25.0);
  EXPECT_DOUBLE_EQ(DecayUsage(100.0, 0, 3600), 100.0);
}

}  // namespace
}  // namespace lockstep::engine
