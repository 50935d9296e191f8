// Issue 27: `sbatch -A ANYNAME` created the account. Which accounts a job may charge, with and
// without Slurm's AccountingStorageEnforce=associations, on clusters with and without accounts.
#include "controller/account_access.h"

#include <gtest/gtest.h>

namespace lockstep::controller {
namespace {

constexpr char kNodes[] = "nodes:\n  - {names: \"n[1-2]\", cpus: 8, memory: 16G}\n";

config::ClusterConfig Cluster(const std::string& rest) {
  Result<config::ClusterConfig> c = config::ParseClusterConfig(kNodes + rest, "cluster.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(*c) : config::ClusterConfig{};
}

bool Allowed(const config::ClusterConfig& c, const std::string& user, const std::string& account) {
  Status s = CheckAccountAccess(c, user, account);
  if (!s.ok()) {
    EXPECT_EQ(s.message(), kInvalidAccount);
  }
  return s.ok();
}

constexpr char kAccounts[] =
    "accounts:\n  - {name: physics}\n  - {name: biology}\n"
    "users:\n  - {name: alice, account: physics, max_jobs: 1}\n";

TEST(AccountAccess, AUserChargesOnlyTheirOwnAssociations) {
  config::ClusterConfig c = Cluster(kAccounts);
  EXPECT_TRUE(Allowed(c, "alice", ""));  // her default: her first association
  EXPECT_TRUE(Allowed(c, "alice", "physics"));
  EXPECT_FALSE(Allowed(c, "alice", "biology"));     // exists, not hers
  EXPECT_FALSE(Allowed(c, "alice", "fresh-name"));  // the escape from MaxJobs=1
  EXPECT_FALSE(Allowed(c, "alice", "default"));
  EXPECT_FALSE(Allowed(c, "mallory", ""));  // no association at all
  EXPECT_FALSE(Allowed(c, "mallory", "default"));
}

TEST(AccountAccess, WithoutAccountsInTheFileUsersRunInTheDefaultAccountOnly) {
  config::ClusterConfig c = Cluster("");  // lockstep up's cluster
  EXPECT_TRUE(Allowed(c, "alice", ""));
  EXPECT_TRUE(Allowed(c, "alice", "default"));
  EXPECT_FALSE(Allowed(c, "alice", "root"));
  EXPECT_FALSE(Allowed(c, "alice", "anyname"));
  // Once lockstepd made her association in "default", it is hers: the same answers.
  c.AssociationFor("alice", "");
  EXPECT_TRUE(Allowed(c, "alice", ""));
  EXPECT_TRUE(Allowed(c, "alice", "default"));
  EXPECT_FALSE(Allowed(c, "alice", "anyname"));
  EXPECT_EQ(c.AccountIndex("anyname"), engine::kNone);
}

TEST(AccountAccess, WithoutEnforcementAnyAccountMayBeNamed) {
  config::ClusterConfig c =
      Cluster(std::string(kAccounts) + "scheduler:\n  accounting_storage_enforce: none\n");
  EXPECT_TRUE(Allowed(c, "alice", "biology"));
  EXPECT_TRUE(Allowed(c, "mallory", "fresh-name"));
}

}  // namespace
}  // namespace lockstep::controller
