// sshare's columns, widths, tree indentation and filters, against text checked with Slurm
// 22.05's sshare (header and widths from the peer, /work/shared/peers/slurm).
#include "cli/format/sshare.h"

#include <gtest/gtest.h>

namespace lockstep::cli {
namespace {

nlohmann::json Tree() {
  auto row = [](const char* account, const char* user, const char* parent, unsigned depth,
                unsigned shares, double norm, double usage, double eff, nlohmann::json level_fs,
                nlohmann::json fairshare) {
    return nlohmann::json{{"account", account}, {"user", user}, {"parent", parent},
                          {"depth", depth}, {"raw_shares", shares}, {"norm_shares", norm},
                          {"raw_usage", usage}, {"norm_usage", usage / 400.0},
                          {"effective_usage", eff}, {"level_fs", level_fs},
                          {"fairshare", fairshare}};
  };
  return {{"shares",
           {row("root", "", "", 0, 1, 0, 400, 1, nullptr, nullptr),
            row("physics", "", "root", 1, 3, 0.75, 100, 0.25, 3.0, nullptr),
            row("physics", "alice", "physics", 2, 1, 1, 100, 1, 1.0, 1.0),
            row("biology", "", "root", 1, 1, 0.25, 300, 0.75, 1.0 / 3, nullptr),
            row("biology", "bob", "biology", 2, 1, 1, 300, 1, 1.0, 0.5)}}};
}

TEST(Sshare, ColumnsAndTreeAsSlurmPrintsThem) {
  SshareOptions o;
  Result<std::string> text = FormatSshare(Tree(), o);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text,
            "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare \n"
            "-------------------- ---------- ---------- ----------- ----------- ------------- ---------- \n"
            "root                                          0.000000         400      1.000000            \n"
            " physics                                 3    0.750000         100      0.250000            \n"
            "  physics                 alice          1    1.000000         100      1.000000   1.000000 \n"
            " biology                                 1    0.250000         300      0.750000            \n"
            "  biology                   bob          1    1.000000         300      1.000000   0.500000 \n");
}

TEST(Sshare, LongParsableAndFilters) {
  SshareOptions o;
  o.long_format = true;
  o.parsable = 2;
  o.users = {"bob"};
  Result<std::string> text = FormatSshare(Tree(), o);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text,
            "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS|"
            "GrpTRESMins|TRESRunMins\n"
            "root|||0.000000|400|1.000000|1.000000||||\n"
            " physics||3|0.750000|100|0.250000|0.250000||3.000000||\n"
            " biology||1|0.250000|300|0.750000|0.750000||0.333333||\n"
            "  biology|bob|1|1.000000|300|0.750000|1.000000|0.500000|1.000000||\n");
  o = {};
  o.parsable = 1;
  o.noheader = true;
  o.accounts = {"physics"};
  text = FormatSshare(Tree(), o);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, " physics||3|0.750000|100|0.250000||\n  physics|alice|1|1.000000|100|1.000000|1.000000|\n");
  o.users_only = true;
  o.accounts.clear();
  o.users = {"alice"};
  text = FormatSshare(Tree(), o);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "  physics|alice|1|1.000000|100|1.000000|1.000000|\n");
}

TEST(Sshare, LongNamesAreCutWithAPlusAndInfinityIsInf) {
  nlohmann::json t = {{"shares",
                       {{{"account", "a-very-long-account-name"}, {"user", "someoneelse1"},
                         {"parent", "root"}, {"depth", 1}, {"raw_shares", 1},
                         {"norm_shares", 1.0}, {"raw_usage", 0}, {"norm_usage", 0},
                         {"effective_usage", 0}, {"level_fs", nullptr}, {"fairshare", 1.0}}}}};
  SshareOptions o;
  o.noheader = true;
  o.long_format = true;
  Result<std::string> text = FormatSshare(t, o);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->substr(0, 32), " a-very-long-accoun+ someoneel+ ");
  EXPECT_NE(text->find("        inf "), std::string::npos) << *text;
}

TEST(Sshare, MalformedAnswersAreErrors) {
  EXPECT_FALSE(FormatSshare(nlohmann::json::array(), {}).ok());
  EXPECT_FALSE(FormatSshare({{"shares", {{{"user", "x"}}}}}, {}).ok());
  EXPECT_FALSE(FormatSshare({{"shares", {{{"account", "a"}, {"user", ""}}}}}, {}).ok());
}

}  // namespace
}  // namespace lockstep::cli
