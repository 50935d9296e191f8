#include "cli/slurm/node_filter.h"

#include <gtest/gtest.h>

namespace lockstep::cli {
namespace {

TEST(NodeFilter, StatesAsSinfoNamesThem) {
  struct Case {
    const char* node_state;
    const char* wanted;
    bool match;
  };
  const Case cases[] = {
      {"idle", "idle", true},        {"mixed", "mix", true},       {"allocated", "alloc", true},
      {"drained", "drain", true},    {"draining", "drain", true},  {"drained", "draining", false},
      {"down*", "down", true},       {"idle*", "no_respond", true}, {"idle", "no_respond", false},
      {"mixed", "idle", false},      {"completing", "comp", true},
  };
  for (const Case& c : cases)
    EXPECT_EQ(NodeStateMatches(c.node_state, c.wanted), c.match) << c.node_state << " " << c.wanted;
  NodeFilter f;
  EXPECT_TRUE(AddNodeStates(f, "IDLE,mix").ok());
  Status bad = AddNodeStates(f, "sleepy");
  EXPECT_EQ(bad.message(), "Invalid node state specified: sleepy");
}

TEST(NodeFilter, KeepsPartitionsThatStillHaveNodes) {
  nlohmann::json parts = {{{"name", "gpu"}}, {{"name", "cpu"}}};
  nlohmann::json nodes = {
      {{"name", "node1"}, {"state", "idle"}, {"partitions", {"gpu"}}},
      {{"name", "node2"}, {"state", "mixed"}, {"partitions", {"gpu", "cpu"}}},
      {{"name", "node3"}, {"state", "down*"}, {"partitions", {"cpu"}}},
  };
  struct Case {
    NodeFilter filter;
    std::vector<std::string> parts, nodes;
  };
  NodeFilter by_part, by_node, by_state, responding, dead;
  by_part.partitions = {"cpu"};
  by_node.nodes = {"node1"};
  by_state.states = {"mix"};
  responding.responding_only = true;
  dead.dead_only = true;
  const Case cases[] = {
      {NodeFilter{}, {"gpu", "cpu"}, {"node1", "node2", "node3"}},
      {by_part, {"cpu"}, {"node2", "node3"}},
      {by_node, {"gpu"}, {"node1"}},
      {by_state, {"gpu", "cpu"}, {"node2"}},
      {responding, {"gpu", "cpu"}, {"node1", "node2"}},
      {dead, {"cpu"}, {"node3"}},
  };
  for (const Case& c : cases) {
    nlohmann::json out = FilterSinfo(parts, nodes, c.filter);
    std::vector<std::string> p, n;
    for (auto& x : out["partitions"]) p.push_back(x["name"]);
    for (auto& x : out["nodes"]) n.push_back(x["name"]);
    EXPECT_EQ(p, c.parts);
    EXPECT_EQ(n, c.nodes);
  }
}

}  // namespace
}  // namespace lockstep::cli
