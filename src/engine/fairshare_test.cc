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

TEST(DecayUsage, HalvesEveryHalfLife) {
  EXPECT_DOUBLE_EQ(DecayUsage(100.0, 3600, 3600), 50.0);
  EXPECT_DOUBLE_EQ(DecayUsage(100.0, 7200, 3600), 25.0);
  EXPECT_DOUBLE_EQ(DecayUsage(100.0, 0, 3600), 100.0);
}

}  // namespace
}  // namespace lockstep::engine
