// sacctmgr's changes over a cluster's tables, without a controller: what each does to the
// tables the engine reads, and that a refused change leaves them as they were.
#include "controller/accounts_admin.h"

#include <gtest/gtest.h>

namespace lockstep::controller {
namespace {

config::ClusterConfig Cluster() {
  Result<config::ClusterConfig> c = config::ParseClusterConfig(R"(
nodes:
  - names: "n[1-2]"
    cpus: 8
    memory: 16G
qos:
  - name: normal
  - name: high
    priority: 10
    preempt: [normal]
accounts:
  - name: physics
  - name: theory
    parent: physics
users:
  - name: alice
    account: physics
  - name: alice
    account: theory
)",
                                                               "test.yaml");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return *c;
}

Result<AccountsReport> Apply(const nlohmann::json& request, config::ClusterConfig& c,
                             AccountsExtras& x, const ActiveUse& active = {}) {
  Result<AccountsChange> change = DecodeAccountsChange(request);
  if (!change.ok()) return change.status();
  return ApplyAccountsChange(*change, c, x, active);
}

TEST(AccountsAdmin, QosLimitsAreParsedMergedAndCleared) {
  config::ClusterConfig c = Cluster();
  AccountsExtras x;
  ASSERT_TRUE(Apply({{"action", "modify"}, {"entity", "qos"}, {"names", {"normal"}},
                     {"set", {{"GrpTRES", "gres/gpu=8,mem=64G"}, {"MaxWall", "1-00:00:00"},
                              {"MaxSubmitJobsPerUser", "5"}}}},
                    c, x).ok());
  const engine::Qos& q = c.base.qos[c.QosIndex("normal")];
  EXPECT_EQ(q.grp_tres.gpus, 8);
  EXPECT_EQ(q.grp_tres.mem_mb, 65536);
  EXPECT_EQ(q.max_wall, 86400);
  EXPECT_EQ(FormatTresLimit(q.grp_tres), "mem=64G,gres/gpu=8");
  EXPECT_EQ(MaxSubmitFor(x, "bob", "physics", "normal"), 5);
  // A later TRES item merges; -1 clears one.
  ASSERT_TRUE(Apply({{"action", "modify"}, {"entity", "qos"}, {"where", {{"name", "normal"}}},
                     {"set", {{"grptres", "cpu=4,gres/gpu=-1"}}}},
                    c, x).ok());
  EXPECT_EQ(FormatTresLimit(c.base.qos[0].grp_tres), "cpu=4,mem=64G");
}

TEST(AccountsAdmin, DeletingAQosRenumbersPreemptListsAndTheDefault) {
  config::ClusterConfig c = Cluster();
  AccountsExtras x;
  ASSERT_TRUE(Apply({{"action", "add"}, {"entity", "qos"}, {"names", {"low"}}}, c, x).ok());
  ASSERT_TRUE(Apply({{"action", "modify"}, {"entity", "qos"}, {"names", {"high"}},
                     {"set", {{"Preempt", "low"}}}},
                    c, x).ok());
  ASSERT_TRUE(Apply({{"action", "delete"}, {"entity", "qos"}, {"names", {"normal"}}}, c, x).ok() ==
              false);  // the default QoS
  c.default_qos = c.QosIndex("high");
  Result<AccountsReport> r = Apply({{"action", "delete"}, {"entity", "qos"}, {"names", {"normal"}}}, c, x);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(c.base.qos.size(), 2u);
  EXPECT_EQ(c.base.qos[c.default_qos].name, "high");
  ASSERT_EQ(c.base.qos[c.QosIndex("high")].preempts.size(), 1u);
  EXPECT_EQ(c.base.qos[c.base.qos[c.QosIndex("high")].preempts[0]].name, "low");
}

TEST(AccountsAdmin, AccountsStayParentsFirstWhenMovedAndDeleted) {
  config::ClusterConfig c = Cluster();
  AccountsExtras x;
  ASSERT_TRUE(Apply({{"action", "add"}, {"entity", "account"}, {"names", {"bio"}},
                     {"set", {{"fairshare", "3"}, {"MaxSubmitJobs", "7"}}}},
                    c, x).ok());
  // physics moves under bio, which was stored after it: the table is reordered.
  ASSERT_TRUE(Apply({{"action", "modify"}, {"entity", "account"}, {"names", {"physics"}},
                     {"set", {{"parent", "bio"}}}},
                    c, x).ok());
  const auto& accts = c.base.accounts;
  for (std::uint32_t a = 1; a < accts.size(); ++a) EXPECT_LT(accts[a].parent, a) << accts[a].name;
  EXPECT_EQ(accts[accts[c.AccountIndex("physics")].parent].name, "bio");
  EXPECT_EQ(c.users[c.base.associations[c.AssociationFor("alice", "theory")].user], "alice");
  EXPECT_EQ(MaxSubmitFor(x, "alice", "bio", ""), 7);
  // A cycle, a child left behind, and jobs in use are refused.
  EXPECT_FALSE(Apply({{"action", "modify"}, {"entity", "account"}, {"names", {"bio"}},
                      {"set", {{"parent", "theory"}}}},
                     c, x).ok());
  EXPECT_FALSE(Apply({{"action", "delete"}, {"entity", "account"}, {"names", {"physics"}}}, c, x).ok());
  ActiveUse busy;
  busy.accounts.insert("theory");
  EXPECT_FALSE(Apply({{"action", "delete"}, {"entity", "account"}, {"names", {"theory"}}}, c, x, busy).ok());
  ASSERT_TRUE(Apply({{"action", "delete"}, {"entity", "account"}, {"names", {"theory"}}}, c, x).ok());
  EXPECT_EQ(c.AccountIndex("theory"), engine::kNone);
  for (const engine::Association& a : c.base.associations) EXPECT_LT(a.account, c.base.accounts.size());
}

TEST(AccountsAdmin, UsersGetAssociationsADefaultAccountAndLimits) {
  config::ClusterConfig c = Cluster();
  AccountsExtras x;
  Result<AccountsReport> r = Apply({{"action", "add"}, {"entity", "user"}, {"names", {"bob"}},
                                    {"set", {{"account", "physics,theory"}, {"DefaultAccount", "theory"},
                                             {"MaxSubmitJobs", "2"}, {"fairshare", "4"}}}},
                                   c, x);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(c.base.accounts[c.base.associations[c.AssociationFor("bob", "")].account].name, "theory");
  EXPECT_EQ(c.base.associations[c.AssociationFor("bob", "physics")].shares, 4u);
  EXPECT_EQ(MaxSubmitFor(x, "bob", "physics", ""), 2);
  nlohmann::json view = AccountsView(c, x);
  bool found = false;
  for (const nlohmann::json& a : view["associations"])
    if (a["user"] == "bob" && a["account"] == "physics") found = a["max_submit"] == 2;
  EXPECT_TRUE(found) << view.dump();
  ASSERT_TRUE(Apply({{"action", "modify"}, {"entity", "user"}, {"names", {"bob"}},
                     {"set", {{"defaultaccount", "physics"}}}},
                    c, x).ok());
  EXPECT_EQ(c.base.accounts[c.base.associations[c.AssociationFor("bob", "")].account].name, "physics");
  ASSERT_TRUE(Apply({{"action", "delete"}, {"entity", "user"}, {"names", {"bob"}},
                     {"where", {{"account", "physics"}}}},
                    c, x).ok());
  EXPECT_EQ(c.base.accounts[c.base.associations[c.AssociationFor("bob", "")].account].name, "theory");
  Result<AccountsReport> none = Apply({{"action", "delete"}, {"entity", "user"}, {"names", {"carol"}}}, c, x);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->changed);
}

TEST(AccountsAdmin, BadRequestsAreRefusedWithTheirPlace) {
  struct Case {
    nlohmann::json request;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{{"action", "drop"}, {"entity", "qos"}, {"names", {"x"}}}, "action"},
      {{{"action", 5}, {"entity", "qos"}, {"names", {"x"}}}, "action: expected a string"},
      {{{"action", "add"}, {"entity", "qos"}, {"names", {"x"}}, {"sett", {}}}, "sett: unknown key"},
      {{{"action", "add"}, {"entity", "qos"}, {"names", {"x"}}, {"set", {{"priority", 3}}}},
       "set.priority: expected a string"},
      {{{"action", "add"}, {"entity", "wckey"}, {"names", {"x"}}}, "entity"},
      {{{"action", "add"}, {"entity", "qos"}}, "No qos name given"},
      {{{"action", "add"}, {"entity", "qos"}, {"names", {"x"}}, {"set", {{"GrpWall", "2"}}}},
       "not enforced"},
      {{{"action", "add"}, {"entity", "qos"}, {"names", {"x"}}, {"set", {{"Fairshare", "2"}}}},
       "Unknown option: fairshare"},
      {{{"action", "add"}, {"entity", "account"}, {"names", {"a b"}}}, "invalid account name"},
      {{{"action", "add"}, {"entity", "account"}, {"names", {"x"}}, {"set", {{"parent", "nope"}}}},
       "Parent account 'nope'"},
      {{{"action", "modify"}, {"entity", "qos"}, {"names", {"normal"}}, {"set", {{"priority", "-5"}}}},
       "Bad Priority value"},
      {{{"action", "modify"}, {"entity", "account"}, {"names", {"physics"}}, {"set", {{"fairshare", "0"}}}},
       "Bad Fairshare value"},
  };
  for (const Case& k : cases) {
    config::ClusterConfig c = Cluster();
    AccountsExtras x;
    Result<AccountsReport> r = Apply(k.request, c, x);
    ASSERT_FALSE(r.ok()) << k.request.dump();
    EXPECT_NE(r.status().message().find(k.error), std::string::npos)
        << k.request.dump() << ": " << r.status().message();
  }
}

}  // namespace
}  // namespace lockstep::controller
