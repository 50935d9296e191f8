#include "cli/format/sinfo.h"

#include <gtest/gtest.h>

#include "cli/format/format_test_data.h"
#include "cli/format/sinfo_record.h"

namespace lockstep::cli {
namespace {

// Golden outputs keep one report line a source line.
// clang-format off

using testdata::kNow;

std::string Sinfo(const nlohmann::json& parts, const nlohmann::json& nodes, SinfoOptions options) {
  options.now = kNow;
  Result<std::string> out = FormatSinfo(parts, nodes, options);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : "";
}

// sinfo(1)'s first example, with adev[6-7] drained and an empty, down partition. Lines are in
// "#P,-t" order: partitions as configured, then node state, highest first (drain > alloc >
// idle); a partition without nodes still gets a line.
TEST(Sinfo, DefaultFormatGolden) {
  EXPECT_EQ(Sinfo(testdata::Partitions(), testdata::Nodes(), {}),
            "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "batch        up   infinite      2  alloc adev[8-9]\n"
            "batch        up   infinite      6   idle adev[10-15]\n"
            "debug*       up      30:00      2  drain adev[6-7]\n"
            "debug*       up      30:00      6   idle adev[0-5]\n"
            "empty      down 2-00:00:00      0    n/a \n");
}

TEST(Sinfo, SummarizeGolden) {
  SinfoOptions options;
  options.summarize = true;
  EXPECT_EQ(Sinfo(testdata::Partitions(), testdata::Nodes(), options),
            "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n"
            "batch        up   infinite          2/6/0/8 adev[8-15]\n"
            "debug*       up      30:00          0/6/2/8 adev[0-7]\n"
            "empty      down 2-00:00:00          0/0/0/0 \n");
}

TEST(Sinfo, LongFormatGolden) {
  SinfoOptions options;
  options.long_format = true;
  EXPECT_EQ(Sinfo(testdata::Partitions(), testdata::Nodes(), options),
            "Sat Nov 29 08:06:40 2025\n"
            "PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE "
            "NODELIST\n"
            "batch        up   infinite 1-infinite   no       NO        all      2   allocated "
            "adev[8-9]\n"
            "batch        up   infinite 1-infinite   no       NO        all      6        idle "
            "adev[10-15]\n"
            "debug*       up      30:00        1-8   no       NO        all      2     drained "
            "adev[6-7]\n"
            "debug*       up      30:00        1-8   no       NO        all      6        idle "
            "adev[0-5]\n"
            "empty      down 2-00:00:00        1-4   no       NO        all      0         n/a "
            "\n");
}

// -N: one line per node, sorted by name with numbers compared as numbers; the partition column
// is right-justified (opts.c "partition:.9") and the state column left-justified and padded.
TEST(Sinfo, NodeOrientedGolden) {
  SinfoOptions options;
  options.node_oriented = true;
  nlohmann::json nodes = testdata::Nodes();
  nlohmann::json few = nlohmann::json::array({nodes[10], nodes[0], nodes[6], nodes[8]});
  EXPECT_EQ(Sinfo(testdata::Partitions(), few, options),
            "NODELIST   NODES PARTITION STATE \n"
            "adev0          1    debug* idle  \n"
            "adev6          1    debug* drain \n"
            "adev8          1     batch alloc \n"
            "adev10         1     batch idle  \n");
}

TEST(Sinfo, NodeOrientedLongGolden) {
  SinfoOptions options;
  options.node_oriented = true;
  options.long_format = true;
  nlohmann::json nodes = testdata::Nodes();
  nodes[6]["features"] = "ib,nvlink";
  EXPECT_EQ(Sinfo(testdata::Partitions(), nlohmann::json::array({nodes[6], nodes[8]}), options),
            "Sat Nov 29 08:06:40 2025\n"
            "NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT AVAIL_FE "
            "REASON              \n"
            "adev6          1    debug*     drained 2       2:1:1   3448        0     16 ib,nvlin "
            "Memory errors       \n"
            "adev8          1     batch   allocated 2       2:1:1   3448        0     16   (null) "
            "none                \n");
}

// -R: only down, drained and draining nodes, one line per reason, across partitions.
TEST(Sinfo, ListReasonsGolden) {
  SinfoOptions options;
  options.list_reasons = true;
  nlohmann::json nodes = testdata::Nodes();
  nodes[12]["state"] = "down*";
  nodes[12]["reason"] = "Not responding";
  nodes[12]["reason_user"] = "slurm";
  nodes[12]["reason_time"] = kNow - 60;
  EXPECT_EQ(Sinfo(testdata::Partitions(), nodes, options),
            "REASON               USER      TIMESTAMP           NODELIST\n"
            "Not responding       slurm     2025-11-29T08:05:40 adev12\n"
            "Memory errors        root      2025-11-29T04:20:00 adev[6-7]\n");
}

TEST(Sinfo, StatesCompactAndNotResponding) {
  nlohmann::json nodes = nlohmann::json::array(
      {testdata::Node("n1", "idle*", "p"), testdata::Node("n2", "mixed", "p", 1),
       testdata::Node("n3", "draining", "p", 2), testdata::Node("n4", "completing", "p"),
       testdata::Node("n5", "down", "p"), testdata::Node("n6", "idle", "p")});
  nlohmann::json parts = nlohmann::json::array(
      {{{"name", "p"}, {"default", false}, {"state", "up"}, {"max_time", 3600}}});
  SinfoOptions options;
  options.format = "%P %t %T %D %C %N";
  EXPECT_EQ(Sinfo(parts, nodes, options),
            "PARTITION STATE STATE NODES CPUS(A/I/O/T) NODELIST\n"
            "p idle* idle* 1 0/2/0/2 n1\n"
            "p comp completing 1 0/2/0/2 n4\n"
            "p drng draining 1 2/0/0/2 n3\n"
            "p mix mixed 1 1/1/0/2 n2\n"
            "p idle idle 1 0/2/0/2 n6\n"
            "p down down 1 0/0/2/2 n5\n");
}

// Without -e, sizes do not split lines and show the smallest value with a '+'; with -e they do.
TEST(Sinfo, ExactGrouping) {
  nlohmann::json nodes = testdata::Nodes();
  nodes[0]["cpus"] = 4;
  nlohmann::json debug = nlohmann::json::array({nodes[0], nodes[1], nodes[2]});
  SinfoOptions options;
  options.format = "%P %c %D %N";
  EXPECT_EQ(Sinfo(testdata::Partitions(), debug, options),
            "PARTITION CPUS NODES NODELIST\nbatch 0 0 \ndebug* 2+ 3 adev[0-2]\nempty 0 0 \n");
  options.exact = true;
  EXPECT_EQ(Sinfo(testdata::Partitions(), debug, options),
            "PARTITION CPUS NODES NODELIST\nbatch 0 0 \ndebug* 4 1 adev0\ndebug* 2 2 adev[1-2]\n"
            "empty 0 0 \n");
}

TEST(Sinfo, DefaultPartitionStarSqueezedIntoWidth) {
  SinfoOptions options;
  options.format = "%5P|%.7P|%R|";
  options.noheader = true;
  nlohmann::json parts = nlohmann::json::array({testdata::Partitions()[1]});
  EXPECT_EQ(Sinfo(parts, testdata::Nodes(), options), "debu*| debug*|debug|\n");
}

TEST(Sinfo, MembershipFromPartitionHostlistWhenNodesDoNotSay) {
  nlohmann::json nodes = testdata::Nodes();
  for (auto& node : nodes) node.erase("partitions");
  SinfoOptions options;
  options.format = "%P %D";
  options.noheader = true;
  EXPECT_EQ(Sinfo(testdata::Partitions(), nodes, options), "batch 8\ndebug* 8\nempty 0\n");
}

TEST(Sinfo, Errors) {
  SinfoOptions options;
  options.sort = "#P,-x";
  EXPECT_FALSE(FormatSinfo(testdata::Partitions(), testdata::Nodes(), options).ok());
  options.sort = "";
  EXPECT_FALSE(FormatSinfo(nlohmann::json{{"x", 1}}, testdata::Nodes(), options).ok());
  EXPECT_FALSE(FormatSinfo(testdata::Partitions(), nlohmann::json{{"nodes", 3}}, options).ok());
}

// The API spells "no node limit" as INT32_MAX: JOB_SIZE says infinite, as for null.
TEST(Sinfo, Int32MaxNodesIsInfinite) {
  nlohmann::json parts = testdata::Partitions();
  parts[0]["max_nodes"] = 2147483647;
  SinfoOptions options;
  options.format = "%P %s";
  Result<std::string> out = FormatSinfo(parts, testdata::Nodes(), options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_NE(out->find("batch 1-infinite\n"), std::string::npos) << *out;
}

// %Z: threads per core (Slurm's THREADS column), as the T of %z.
TEST(Sinfo, ThreadsColumn) {
  SinfoOptions options;
  options.format = "%Z|%z";
  Result<std::string> out = FormatSinfo(testdata::Partitions(), testdata::Nodes(), options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const std::string second = out->substr(out->find('\n') + 1);
  const std::string threads = second.substr(0, second.find('|'));
  const std::string stc = second.substr(second.find('|') + 1, second.find('\n') - second.find('|') - 1);
  EXPECT_EQ(out->substr(0, out->find('\n')), "THREADS|S:C:T");
  EXPECT_EQ(stc.substr(stc.rfind(':') + 1), threads) << *out;
}

// Every letter of Slurm 22.05's sinfo is known (none printed as text), and %L says n/a for a
// partition without a DefaultTime, as Slurm does.
TEST(Sinfo, EveryLetterOfSlurm2205) {
  SinfoOptions options;
  for (char c : std::string("aAbBcCdDeEfFgGhHIlLmMnNoOpPrRsStTuUvVwXYzZ")) {
    options.format = std::string("%") + c;
    Result<std::string> out = FormatSinfo(testdata::Partitions(), testdata::Nodes(), options);
    ASSERT_TRUE(out.ok()) << c << ": " << out.status().ToString();
    EXPECT_EQ(out->find('%'), std::string::npos) << c << ":\n" << *out;
  }
  options.format = "%P %L";
  Result<std::string> out = FormatSinfo(testdata::Partitions(), testdata::Nodes(), options);
  ASSERT_TRUE(out.ok());
  EXPECT_NE(out->find("batch n/a\n"), std::string::npos) << *out;
}

// An unknown letter is printed as text, as Slurm 22.05's sinfo does ("%.5Q"): not an error.
TEST(Sinfo, UnknownLetterPrintedAsText) {
  SinfoOptions options;
  options.format = "%P|%.5Q|%a";
  Result<std::string> out = FormatSinfo(testdata::Partitions(), testdata::Nodes(), options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->substr(0, out->find('\n')), "PARTITION|%.5Q|AVAIL");
  EXPECT_NE(out->find("batch|%.5Q|up\n"), std::string::npos) << *out;
}

TEST(SinfoRecord, ParseNodeState) {
  NodeState drained = ParseNodeState("drained");
  EXPECT_EQ(drained.compact, "drain");
  EXPECT_TRUE(drained.drain);
  EXPECT_FALSE(drained.alloc);
  NodeState draining = ParseNodeState("DRAINING");
  EXPECT_EQ(draining.compact, "drng");
  EXPECT_TRUE(draining.alloc);
  NodeState down = ParseNodeState("down*");
  EXPECT_EQ(down.compact, "down*");
  EXPECT_EQ(down.longname, "down*");
  EXPECT_GT(down.code, drained.code);
  EXPECT_EQ(ParseNodeState("allocated").compact, "alloc");
  EXPECT_EQ(ParseNodeState("weird").compact, "weird");
}

// clang-format on

}  // namespace
}  // namespace lockstep::cli
