// The `nodes:` and `topology:` sections (cluster_config_nodes.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/cluster_config.h"
#include "config/cluster_config_test_util.h"

namespace lockstep::config {
namespace {

using engine::kNone;
using test::ErrorOf;
using test::Parse;
using test::WithNodes;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// ---------------------------------------------------------------------------------------------
// Nodes, MIG, features

// NodeIndex answers from a map, which must follow the public node table wherever it changes.
TEST(ClusterConfigTest, NodeIndexFollowsChangesToTheNodeTable) {
  ClusterConfig c = HomogeneousCluster(3, 8, 1000, 0, "", "n");
  EXPECT_EQ(c.NodeIndex("n2"), 1u);
  EXPECT_EQ(c.NodeIndex("n9"), kNone);
  c.base.nodes[1].name = "renamed";  // in place: same size
  EXPECT_EQ(c.NodeIndex("n2"), kNone);
  EXPECT_EQ(c.NodeIndex("renamed"), 1u);
  engine::Node extra = c.base.nodes[0];
  extra.name = "n9";
  EXPECT_EQ(c.AddNode(extra), 3u);
  EXPECT_EQ(c.NodeIndex("n9"), 3u);
  ClusterConfig copy = c;  // the copy's table is its own
  copy.base.nodes[0].name = "first";
  EXPECT_EQ(copy.NodeIndex("first"), 0u);
  EXPECT_EQ(copy.NodeIndex("n1"), kNone);
  EXPECT_EQ(c.NodeIndex("n1"), 0u);
  EXPECT_EQ(c.NodeIndex("first"), kNone);
}


TEST(ClusterConfigTest, NodeDefaultsAndFields) {
  Result<ClusterConfig> r = Parse(R"(
nodes:
  - names: [a1, "b[1-2]"]
  - names: c1
    cpus: 16
    memory: 4096
    gpus: 2
    features: [ib]
    weight: 10
    state: DOWN
)");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const engine::Snapshot& s = r->base;
  ASSERT_EQ(s.nodes.size(), 4u);
  EXPECT_EQ(s.nodes[2].name, "b2");
  EXPECT_EQ(s.nodes[0].cpus, 1);  // Slurm's CPUs=1, RealMemory=1
  EXPECT_EQ(s.nodes[0].mem_mb, 1);
  EXPECT_TRUE(s.nodes[0].gpus.empty());
  EXPECT_EQ(s.nodes[0].leaf_switch, kNone);
  EXPECT_EQ(s.nodes[3].mem_mb, 4096);
  ASSERT_EQ(s.nodes[3].gpus.size(), 2u);
  EXPECT_EQ(s.gpu_types[s.nodes[3].gpus[1].type], "gpu");  // the type when none is named
  EXPECT_EQ(s.nodes[3].features, 1u);
  EXPECT_EQ(s.nodes[3].weight, 10);
  EXPECT_EQ(s.nodes[3].state, engine::NodeState::kDown);
}

TEST(ClusterConfigTest, MigSlicesReplaceTheirGpu) {
  Result<ClusterConfig> r = Parse(R"(
nodes:
  - names: m1
    gpus: 3
    gpu_type: a100
    mig:
      - gpu: 1
        slices: [3g.40gb, 2g.20gb, 1g.10gb]
)");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ClusterConfig& c = *r;
  const std::vector<engine::GpuDevice>& d = c.base.nodes[0].gpus;
  ASSERT_EQ(d.size(), 5u);
  for (std::size_t i = 0; i < d.size(); ++i) EXPECT_EQ(d[i].index, i);
  EXPECT_EQ(d[0].type, c.GpuTypeIndex("a100"));
  EXPECT_EQ(d[0].parent, -1);
  EXPECT_EQ(d[1].type, c.GpuTypeIndex("a100_3g.40gb"));
  EXPECT_EQ(d[2].type, c.GpuTypeIndex("a100_2g.20gb"));
  EXPECT_EQ(d[3].type, c.GpuTypeIndex("a100_1g.10gb"));
  for (int i = 1; i <= 3; ++i) EXPECT_EQ(d[i].parent, 1);
  EXPECT_EQ(d[4].type, c.GpuTypeIndex("a100"));
  EXPECT_EQ(d[4].parent, -1);
  EXPECT_TRUE(d[4].uuid.empty());
}

TEST(ClusterConfigTest, DeviceAndTypeLimits) {
  EXPECT_THAT(ErrorOf(R"(
nodes:
  - names: n1
    gpus: 65
)"),
              StartsWith("cluster.yaml:3: nodes[0].gpus: 65 is out of range [0, 64]"));
  // Ten GPUs in seven slices each: 70 devices.
  std::string many = "nodes:\n  - names: n1\n    gpus: 10\n    mig:\n";
  for (int g = 0; g < 10; ++g) {
    many += "      - {gpu: " + std::to_string(g) +
            ", slices: [1g.5gb,1g.5gb,1g.5gb,1g.5gb,1g.5gb," + "1g.5gb,1g.5gb]}\n";
  }
  EXPECT_THAT(ErrorOf(many), StartsWith("cluster.yaml:4: nodes[0].mig: 70 GPU devices"));
  EXPECT_THAT(ErrorOf(R"(
nodes:
  - names: n1
    gpus: 3
    gpu_type: h100
    mig:
      - {gpu: 0, slices: [1g.10gb, 2g.20gb, 3g.40gb]}
      - {gpu: 1, slices: [4g.40gb]}
)"),
              StartsWith("cluster.yaml:5: nodes[0].mig: 5 distinct GPU types on one node"));
  EXPECT_THAT(ErrorOf(R"(
nodes:
  - names: n1
    gpus: 1
    mig:
      - {gpu: 0, slices: [4g.40gb, 4g.40gb]}
)"),
              StartsWith("cluster.yaml:5: nodes[0].mig[0].slices: the slices need 8"));
  EXPECT_THAT(ErrorOf(R"(
nodes:
  - names: n1
    gpus: 2
    mig:
      - {gpu: 1, slices: [3g.40gb]}
      - {gpu: 1, slices: [3g.40gb]}
)"),
              StartsWith("cluster.yaml:6: nodes[0].mig[1].gpu: GPU 1 is partitioned twice"));
  EXPECT_THAT(ErrorOf(R"(
nodes:
  - names: n1
    gpus: 2
    mig:
      - {gpu: 2, slices: [3g.40gb]}
)"),
              StartsWith("cluster.yaml:5: nodes[0].mig[0].gpu: 2 is out of range [0, 1]"));
}

TEST(ClusterConfigTest, AtMost64Features) {
  std::string text = "nodes:\n";
  for (int i = 0; i < 65; ++i) {
    text += "  - names: n" + std::to_string(i) + "\n    features: [f" + std::to_string(i) + "]\n";
  }
  EXPECT_THAT(ErrorOf(text),
              StartsWith("cluster.yaml:131: nodes[64].features: more than 64 distinct features"));
  text.resize(text.rfind("  - names: n64"));
  Result<ClusterConfig> r = Parse(text);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->base.nodes[63].features, std::uint64_t{1} << 63);
  EXPECT_EQ(r->FeatureIndex("f63"), 63u);
}

TEST(ClusterConfigTest, NodeErrors) {
  EXPECT_THAT(ErrorOf(R"(
nodes:
  - names: n[1-2],n2
)"),
              StartsWith("cluster.yaml:2: nodes[0].names: node 'n2' is defined twice"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
  - names: n3
    cpus: 4
)")),
              StartsWith("cluster.yaml:5: nodes[1].names: node 'n3' is defined twice"));
  EXPECT_THAT(ErrorOf("nodes:\n  - names: n[3-1]\n"),
              StartsWith("cluster.yaml:2: nodes[0].names: 'n[3-1]' is not a hostlist"));
  EXPECT_THAT(ErrorOf("nodes:\n  - cpus: 4\n"),
              StartsWith("cluster.yaml:2: nodes[0].names: required"));
  EXPECT_THAT(ErrorOf("nodes:\n  - names: n1\n    memory: 12X\n"),
              StartsWith("cluster.yaml:3: nodes[0].memory: '12X' is not a memory size"));
  EXPECT_THAT(ErrorOf("nodes:\n  - names: n1\n    cpus: many\n"),
              StartsWith("cluster.yaml:3: nodes[0].cpus: 'many' is not an integer"));
  EXPECT_THAT(ErrorOf("nodes:\n  - names: n1\n    state: broken\n"),
              StartsWith("cluster.yaml:3: nodes[0].state: 'broken' is not one of up|drain|down"));
  EXPECT_THAT(ErrorOf("nodes:\n  - names: n1\n    gpu_type: h100\n"),
              StartsWith("cluster.yaml:3: nodes[0].gpu_type: given without gpus"));
  EXPECT_THAT(ErrorOf("nodes:\n  - names: n1\n    features: [a b]\n"),
              StartsWith("cluster.yaml:3: nodes[0].features: 'a b' is not a valid name"));
  EXPECT_THAT(ErrorOf("nodes: []\n"), StartsWith("cluster.yaml:1: nodes: at least one node"));
  EXPECT_THAT(ErrorOf("scheduler: {policy: easy}\n"),
              StartsWith("cluster.yaml:1: nodes: at least one node"));
  EXPECT_THAT(ErrorOf(""), StartsWith("cluster.yaml: nodes: at least one node"));
}

// ---------------------------------------------------------------------------------------------
// Topology

TEST(ClusterConfigTest, SwitchesAndBlocksGiveNodeIndexes) {
  Result<ClusterConfig> r = Parse(WithNodes(R"(
topology:
  switches:
    - name: top
      switches: [mid]
    - name: mid
      switches: s[1-2]
    - name: s1
      nodes: n[1-2]
    - name: s2
      nodes: n3
  blocks:
    - name: b1
      nodes: n[2-4]
)"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ClusterConfig& c = *r;
  const engine::Snapshot& s = c.base;
  ASSERT_EQ(s.switches.size(), 4u);
  EXPECT_EQ(s.switches[0].parent, kNone);
  EXPECT_EQ(s.switches[c.SwitchIndex("mid")].parent, 0u);
  EXPECT_EQ(s.switches[c.SwitchIndex("s1")].parent, c.SwitchIndex("mid"));
  EXPECT_EQ(s.switches[c.SwitchIndex("s2")].parent, c.SwitchIndex("mid"));
  EXPECT_EQ(s.nodes[0].leaf_switch, c.SwitchIndex("s1"));
  EXPECT_EQ(s.nodes[1].leaf_switch, c.SwitchIndex("s1"));
  EXPECT_EQ(s.nodes[2].leaf_switch, c.SwitchIndex("s2"));
  EXPECT_EQ(s.nodes[3].leaf_switch, kNone);
  EXPECT_EQ(s.nodes[0].block, kNone);
  EXPECT_EQ(s.nodes[1].block, 0u);
  EXPECT_EQ(s.nodes[3].block, 0u);
}

TEST(ClusterConfigTest, TopologyErrors) {
  EXPECT_THAT(ErrorOf(WithNodes(R"(
topology:
  switches:
    - name: spine
      switches: leaf[1-2]
    - name: leaf1
      nodes: n[1-2]
)")),
              StartsWith("cluster.yaml:8: topology.switches[0].switches: unknown switch 'leaf2'"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
topology:
  switches:
    - name: leaf1
      nodes: n[1-5]
)")),
              StartsWith("cluster.yaml:8: topology.switches[0].nodes: unknown node 'n5'"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
topology:
  switches:
    - name: a
      switches: b
    - name: b
      switches: c
    - name: c
      switches: a
    - name: leaf
      nodes: n1
)")),
              StartsWith("cluster.yaml:12: topology.switches[2].switches: switches form a cycle: "
                         "a -> b -> c -> a"));
  EXPECT_THAT(
      ErrorOf(WithNodes(R"(
topology:
  switches:
    - name: a
      switches: a
)")),
      StartsWith("cluster.yaml:8: topology.switches[0].switches: switch 'a' cannot contain"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
topology:
  switches:
    - name: a
      nodes: n[1-2]
    - name: b
      nodes: n[2-3]
)")),
              StartsWith("cluster.yaml:10: topology.switches[1].nodes: node 'n2' is already under "
                         "switch 'a'"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
topology:
  switches:
    - name: a
      nodes: n1
    - name: a
      nodes: n2
)")),
              StartsWith("cluster.yaml:9: topology.switches[1].name: switch 'a' is defined twice"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
topology:
  switches:
    - name: a
      nodes: n1
      switches: b
    - name: b
      nodes: n2
)")),
              HasSubstr("topology.switches[0].nodes: a switch has nodes (a leaf) or switches"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
topology:
  blocks:
    - name: b1
      nodes: n[1-2]
    - name: b2
      nodes: n[2-3]
)")),
              StartsWith("cluster.yaml:10: topology.blocks[1].nodes: node 'n2' is already in "
                         "block 'b1'"));
}

}  // namespace
}  // namespace lockstep::config
