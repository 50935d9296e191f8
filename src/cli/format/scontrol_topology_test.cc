#include "cli/format/scontrol_topology.h"

#include <gtest/gtest.h>

namespace lockstep::cli {
namespace {

// Two leaf switches under a spine, as GET /api/v1/topology answers them.
const nlohmann::json kTree = nlohmann::json::parse(R"({"plugin": "topology/tree", "switches": [
  {"name": "s0", "level": 0, "link_speed": 1, "nodes": "node[01-04]"},
  {"name": "s1", "level": 0, "link_speed": 1, "nodes": "node[05-08]"},
  {"name": "spine", "level": 1, "link_speed": 1, "nodes": "node[01-08]", "switches": "s[0-1]"}],
  "blocks": []})");

TEST(ScontrolShowTopology, EverySwitchAsSlurm2205PrintsIt) {
  Result<std::string> text = FormatScontrolShowTopology(kTree, "");
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text,
            "SwitchName=s0 Level=0 LinkSpeed=1 Nodes=node[01-04] \n"
            "SwitchName=s1 Level=0 LinkSpeed=1 Nodes=node[05-08] \n"
            "SwitchName=spine Level=1 LinkSpeed=1 Nodes=node[01-08] Switches=s[0-1] \n");
}

TEST(ScontrolShowTopology, ASwitchByNameOrTheSwitchesAboveANode) {
  EXPECT_EQ(*FormatScontrolShowTopology(kTree, "s1"),
            "SwitchName=s1 Level=0 LinkSpeed=1 Nodes=node[05-08] \n");
  EXPECT_EQ(*FormatScontrolShowTopology(kTree, "node06"),
            "SwitchName=s1 Level=0 LinkSpeed=1 Nodes=node[05-08] \n"
            "SwitchName=spine Level=1 LinkSpeed=1 Nodes=node[01-08] Switches=s[0-1] \n");
  EXPECT_EQ(*FormatScontrolShowTopology(kTree, "node[04-05]"),
            "SwitchName=spine Level=1 LinkSpeed=1 Nodes=node[01-08] Switches=s[0-1] \n");
  Result<std::string> none = FormatScontrolShowTopology(kTree, "node99");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(),
            "Topology information contains no switch or node named node99");
}

TEST(ScontrolShowTopology, NoTopologyInSlurmsWords) {
  for (const char* answer :
       {R"({"plugin": "topology/none", "switches": [], "blocks": []})", "{}"}) {
    Result<std::string> text = FormatScontrolShowTopology(nlohmann::json::parse(answer), "");
    ASSERT_FALSE(text.ok());
    EXPECT_EQ(text.status().message(), "No topology information available");
  }
}

TEST(ScontrolShowTopology, BlocksAsTopologyBlockPrintsThem) {
  const nlohmann::json blocks = nlohmann::json::parse(R"({"plugin": "topology/block",
    "switches": [], "blocks": [
      {"name": "nvl0", "index": 0, "nodes": "gb[01-18]", "block_size": 18},
      {"name": "nvl1", "index": 1, "nodes": "gb[19-36]", "block_size": 18}]})");
  EXPECT_EQ(*FormatScontrolShowTopology(blocks, ""),
            "BlockName=nvl0 BlockIndex=0 Nodes=gb[01-18] BlockSize=18\n"
            "BlockName=nvl1 BlockIndex=1 Nodes=gb[19-36] BlockSize=18\n");
  Result<std::string> none = FormatScontrolShowTopology(blocks, "x1");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(), "Topology information contains no block or node named x1");
}

}  // namespace
}  // namespace lockstep::cli
