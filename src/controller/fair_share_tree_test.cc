// The fair-share tree as sshare shows it, with usage: shares and usage normalized among
// siblings, Level FS, and the engine's Fair Tree factors, checked by hand.
#include "controller/fair_share_tree.h"

#include <gtest/gtest.h>

#include <cmath>

namespace lockstep::controller {
namespace {

TEST(FairShareTree, SharesUsageLevelFsAndFactorsOfEachLine) {
  std::vector<engine::Account> accounts(3);
  accounts[0] = {"root", engine::kNone, 1, {}};
  accounts[1] = {"physics", 0, 3, {}};
  accounts[2] = {"biology", 0, 1, {}};
  const std::vector<std::string> users = {"alice", "bob", "carol"};
  std::vector<engine::Association> assocs = {{0, 1, 1, 100.0}, {1, 2, 1, 300.0}, {2, 1, 1, 0.0}};
  const std::vector<ShareRow> rows = FairShareTree(accounts, assocs, users);
  ASSERT_EQ(rows.size(), 6u);
  // Depth first; under each account its users, then its accounts, each by name.
  const char* order[][2] = {{"root", ""},      {"biology", ""},    {"biology", "bob"},
                            {"physics", ""},   {"physics", "alice"}, {"physics", "carol"}};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].account, order[i][0]) << i;
    EXPECT_EQ(rows[i].user, order[i][1]) << i;
  }
  EXPECT_EQ(rows[0].raw_usage, 400);
  EXPECT_EQ(rows[0].effective_usage, 1);
  const ShareRow& biology = rows[1];
  EXPECT_EQ(biology.depth, 1u);
  EXPECT_DOUBLE_EQ(biology.norm_shares, 0.25);
  EXPECT_DOUBLE_EQ(biology.effective_usage, 0.75);
  EXPECT_DOUBLE_EQ(biology.norm_usage, 0.75);
  EXPECT_DOUBLE_EQ(biology.level_fs, 0.25 / 0.75);
  EXPECT_EQ(biology.fairshare, -1) << "an account has no factor";
  const ShareRow& physics = rows[3];
  EXPECT_DOUBLE_EQ(physics.norm_shares, 0.75);
  EXPECT_DOUBLE_EQ(physics.effective_usage, 0.25);
  EXPECT_DOUBLE_EQ(physics.level_fs, 3);
  const ShareRow &alice = rows[4], &carol = rows[5], &bob = rows[2];
  EXPECT_EQ(alice.depth, 2u);
  EXPECT_DOUBLE_EQ(alice.norm_shares, 0.5);
  EXPECT_DOUBLE_EQ(alice.effective_usage, 1);
  EXPECT_DOUBLE_EQ(alice.norm_usage, 0.25);
  EXPECT_DOUBLE_EQ(alice.level_fs, 0.5);
  EXPECT_EQ(carol.effective_usage, 0);
  EXPECT_TRUE(std::isinf(carol.level_fs)) << "no usage: infinite";
  // Fair Tree: physics (Level FS 3) before biology (1/3); in physics carol (inf) before alice.
  EXPECT_DOUBLE_EQ(carol.fairshare, 1.0);
  EXPECT_DOUBLE_EQ(alice.fairshare, 2.0 / 3);
  EXPECT_DOUBLE_EQ(bob.fairshare, 1.0 / 3);
}

TEST(FairShareTree, NoAccountsNoLines) {
  EXPECT_TRUE(FairShareTree({}, {}, {}).empty());
}

}  // namespace
}  // namespace lockstep::controller
