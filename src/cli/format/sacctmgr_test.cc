// sacctmgr list/show: Slurm's default columns, format= with prefixes and widths, -p/-P/-n,
// conditions, and the cut of long values.
#include "cli/format/sacctmgr.h"

#include <gtest/gtest.h>

namespace lockstep::cli {
namespace {

const nlohmann::json kTables = nlohmann::json::parse(R"({
  "cluster": "lockstep",
  "accounts": [{"name": "root", "description": "default root account", "organization": "root"},
               {"name": "physics", "description": "Physics", "organization": "science"}],
  "associations": [
    {"account": "root", "user": "", "parent": "", "shares": 1, "grp_tres": "", "max_submit": null},
    {"account": "physics", "user": "", "parent": "root", "shares": 10, "grp_tres": "gres/gpu=8", "max_submit": null},
    {"account": "physics", "user": "alice", "parent": "", "shares": 2, "grp_tres": "", "max_submit": 5}],
  "users": [{"name": "alice", "default_account": "physics"}],
  "qos": [{"name": "normal", "description": "normal", "priority": 0, "max_wall": 172800,
           "max_tres_per_user": "cpu=8,gres/gpu=4", "grp_tres": "", "preempt": [],
           "preempt_mode": "off", "grace_time": 0, "max_submit_per_user": 3}]
})");

std::string List(SacctmgrList l) {
  Result<std::string> s = FormatSacctmgrList(kTables, l);
  return s.ok() ? *s : "error: " + s.status().message();
}

TEST(SacctmgrFormat, Listings) {
  using E = SacctmgrList::Entity;
  using P = SacctmgrList::Parsable;
  struct Case {
    SacctmgrList list;
    std::string out;
  };
  const std::vector<Case> cases = {
      {{.entity = E::kAccount},
       "   Account                Descr                  Org \n"
       "---------- -------------------- -------------------- \n"
       "      root default root account                 root \n"
       "   physics              Physics              science \n"},
      {{.entity = E::kUser},
       "      User   Def Acct     Admin \n"
       "---------- ---------- --------- \n"
       "     alice    physics      None \n"},
      {{.entity = E::kAssociation, .noheader = true, .parsable = P::kNoTrailing,
        .format = {"Acc", "User", "Share", "GrpTRES", "MaxSubmit"}},
       "root||1||\nphysics||10|gres/gpu=8|\nphysics|alice|2||5\n"},
      {{.entity = E::kAccount, .with_assoc = true, .parsable = P::kWithTrailing,
        .format = {"Account", "ParentName", "User"}, .where = {{"account", {"physics"}}}},
       "Account|Par Name|User|\nphysics|root||\nphysics||alice|\n"},
      {{.entity = E::kQos, .noheader = true, .parsable = P::kNoTrailing,
        .format = {"Name", "MaxWall", "MaxTRESPU", "MaxSubmitPU", "GraceTime", "PreemptMode"}},
       "normal|2-00:00:00|cpu=8,gres/gpu=4|3|00:00:00|OFF\n"},
      {{.entity = E::kQos, .format = {"Name%4", "MaxTRESPerUser%-8"}},
       "Name MaxTRESP \n---- -------- \nnor+ cpu=8,g+ \n"},
      {{.entity = E::kUser, .names = {"bob"}}, "      User   Def Acct     Admin \n"
                                              "---------- ---------- --------- \n"},
      {{.entity = E::kQos, .format = {"Bogus"}}, "error: Unknown field 'Bogus'"},
      {{.entity = E::kUser, .where = {{"qos", {"x"}}}}, "error: Unknown condition: qos"},
  };
  for (const Case& c : cases) EXPECT_EQ(List(c.list), c.out);
}

TEST(SacctmgrFormat, Entities) {
  SacctmgrList::Entity e;
  EXPECT_TRUE(ParseSacctmgrEntity("Accounts", &e));
  EXPECT_EQ(e, SacctmgrList::Entity::kAccount);
  EXPECT_TRUE(ParseSacctmgrEntity("assoc", &e));
  EXPECT_EQ(e, SacctmgrList::Entity::kAssociation);
  EXPECT_FALSE(ParseSacctmgrEntity("wckey", &e));
}

}  // namespace
}  // namespace lockstep::cli
