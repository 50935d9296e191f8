// The cluster config as a whole: the examples, generic YAML errors, associations, files.
#include "config/cluster_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/cluster_config_test_util.h"

namespace lockstep::config {
namespace {

using engine::kNone;
using test::ErrorOf;
using test::Parse;
using test::WithNodes;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The examples

TEST(ClusterConfigTest, Gpu64ExampleParses) {
  Result<ClusterConfig> r = LoadClusterConfig(test::SourceDir() + "/examples/clusters/gpu64.yaml");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ClusterConfig& c = *r;
  const engine::Snapshot& s = c.base;
  ASSERT_EQ(s.nodes.size(), 64u);
  EXPECT_EQ(s.nodes[0].name, "gpu001");
  EXPECT_EQ(s.nodes[63].name, "gpu064");
  EXPECT_EQ(s.nodes[0].mem_mb, 2 * 1024 * 1024);
  ASSERT_EQ(s.gpu_types, std::vector<std::string>{"h100"});
  for (const engine::Node& n : s.nodes) {
    ASSERT_EQ(n.gpus.size(), 8u);
    EXPECT_EQ(n.gpus[7].index, 7);
    EXPECT_EQ(n.gpus[7].type, 0u);
    EXPECT_EQ(n.gpus[7].parent, -1);
    EXPECT_EQ(n.state, engine::NodeState::kUp);
    EXPECT_EQ(n.features, 0b111u);
    EXPECT_EQ(n.block, kNone);
  }
  ASSERT_EQ(s.switches.size(), 5u);
  const std::uint32_t spine = c.SwitchIndex("spine");
  EXPECT_EQ(s.switches[spine].parent, kNone);
  for (int leaf = 0; leaf < 4; ++leaf) {
    EXPECT_EQ(s.switches[leaf].name, "leaf" + std::to_string(leaf + 1));
    EXPECT_EQ(s.switches[leaf].parent, spine);
    for (int i = 0; i < 16; ++i) EXPECT_EQ(s.nodes[leaf * 16 + i].leaf_switch, leaf);
  }
  ASSERT_EQ(s.partitions.size(), 2u);
  EXPECT_EQ(c.default_partition, c.PartitionIndex("gpu"));
  const engine::Partition& gpu = s.partitions[c.PartitionIndex("gpu")];
  EXPECT_EQ(gpu.nodes.size(), 64u);
  EXPECT_EQ(gpu.max_time, 2 * 86400);
  EXPECT_EQ(gpu.default_time, 3600);
  EXPECT_EQ(gpu.max_nodes, 32);
  const engine::Partition& preempt = s.partitions[c.PartitionIndex("preempt")];
  EXPECT_LT(preempt.priority_tier, gpu.priority_tier);
  EXPECT_EQ(preempt.preempt_mode, engine::PreemptMode::kRequeue);
  EXPECT_EQ(preempt.grace_time, 120);
  ASSERT_EQ(s.qos.size(), 3u);
  EXPECT_EQ(c.default_qos, c.QosIndex("normal"));
  const engine::Qos& high = s.qos[c.QosIndex("high")];
  EXPECT_EQ(high.preempts, std::vector<std::uint32_t>{c.QosIndex("scavenger")});
  EXPECT_EQ(high.grp_tres.gpus, 256);
  EXPECT_EQ(high.grp_tres.cpus, kUnlimited);
  EXPECT_EQ(s.qos[c.QosIndex("normal")].max_tres_per_user.nodes, 32);
  ASSERT_EQ(s.accounts.size(), 3u);
  EXPECT_EQ(s.accounts[0].name, "root");
  EXPECT_EQ(s.accounts[c.AccountIndex("llm")].parent, 0u);
  EXPECT_EQ(s.accounts[c.AccountIndex("llm")].shares, 60u);
  EXPECT_EQ(c.users, (std::vector<std::string>{"alice", "bob", "carol", "dave"}));
  EXPECT_EQ(s.associations.size(), 5u);
  EXPECT_EQ(c.policy.reservation_depth, 1);
  EXPECT_EQ(c.policy.preempt, engine::PreemptType::kPartitionPriority);
  EXPECT_EQ(c.policy.weights.fairshare, 10000u);
  EXPECT_EQ(c.fairshare_half_life, 7 * 86400);
  EXPECT_EQ(s.now, 0);
  EXPECT_TRUE(s.pending.empty());
  EXPECT_TRUE(s.running.empty());
}

TEST(ClusterConfigTest, MigExampleParses) {
  Result<ClusterConfig> r = LoadClusterConfig(test::SourceDir() + "/examples/clusters/mig.yaml");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ClusterConfig& c = *r;
  const engine::Snapshot& s = c.base;
  ASSERT_EQ(s.nodes.size(), 11u);
  const engine::Node& mig01 = s.nodes[c.NodeIndex("mig01")];
  ASSERT_EQ(mig01.gpus.size(), 4u * 2 + 4u * 7);
  EXPECT_EQ(s.gpu_types[mig01.gpus[0].type], "a100_3g.40gb");
  EXPECT_EQ(mig01.gpus[1].parent, 0);
  EXPECT_EQ(mig01.gpus[2].parent, 1);
  EXPECT_EQ(s.gpu_types[mig01.gpus[8].type], "a100_1g.10gb");
  EXPECT_EQ(mig01.gpus[8].parent, 4);
  EXPECT_EQ(mig01.gpus[35].parent, 7);
  EXPECT_EQ(c.GpuTypeIndex("a100"), kNone);  // never offered whole
  const engine::Node& h1 = s.nodes[c.NodeIndex("h100-01")];
  ASSERT_EQ(h1.gpus.size(), 6u + 3 + 3);
  EXPECT_EQ(h1.gpus[5].type, c.GpuTypeIndex("h100"));
  EXPECT_EQ(h1.gpus[6].type, c.GpuTypeIndex("h100_4g.40gb"));
  EXPECT_EQ(h1.gpus[6].parent, 6);
  EXPECT_EQ(h1.gpus[11].type, c.GpuTypeIndex("h100_2g.20gb"));
  EXPECT_EQ(h1.gpus[11].parent, 7);
  EXPECT_EQ(h1.block, c.BlockIndex("nvl1"));
  EXPECT_EQ(s.nodes[c.NodeIndex("h100-09")].block, c.BlockIndex("nvl2"));
  EXPECT_EQ(s.nodes[c.NodeIndex("h100-09")].state, engine::NodeState::kDrain);
  EXPECT_EQ(s.nodes[c.NodeIndex("h100-09")].reason, "xid 79: GPU fell off the bus");
  EXPECT_EQ(mig01.block, kNone);
  EXPECT_EQ(s.blocks, (std::vector<std::string>{"nvl1", "nvl2"}));
  EXPECT_EQ(c.default_partition, c.PartitionIndex("train"));
  EXPECT_EQ(s.partitions[c.PartitionIndex("inference")].default_time, 30 * 60);
  EXPECT_EQ(s.partitions[c.PartitionIndex("inference")].nodes.size(), 4u);
  EXPECT_EQ(c.policy.reservation_depth, 20);
  EXPECT_EQ(c.default_qos, 0u);
  EXPECT_EQ(s.associations.size(), 2u);
  EXPECT_EQ(s.associations[1].account, 0u);  // users without an account are under root
}

// ---------------------------------------------------------------------------------------------
// Generic YAML errors

TEST(ClusterConfigTest, UnknownKeysAreErrors) {
  EXPECT_THAT(ErrorOf(WithNodes("partitons:\n  - name: gpu\n")),
              StartsWith("cluster.yaml:5: partitons: unknown key"));
  EXPECT_THAT(ErrorOf("nodes:\n  - names: n1\n    cpu: 4\n"),
              StartsWith("cluster.yaml:3: nodes[0].cpu: unknown key (known here: names, cpus,"));
  EXPECT_THAT(ErrorOf(WithNodes(R"(
qos:
  - name: normal
    max_tres_per_user: {gpus: 8}
)")),
              StartsWith("cluster.yaml:7: qos[0].max_tres_per_user.gpus: unknown key"));
  EXPECT_THAT(ErrorOf(WithNodes("scheduler:\n  weights: {fair_share: 1}\n")),
              StartsWith("cluster.yaml:6: scheduler.weights.fair_share: unknown key"));
  EXPECT_THAT(ErrorOf(WithNodes("topology:\n  switch: []\n")),
              StartsWith("cluster.yaml:6: topology.switch: unknown key"));
}

TEST(ClusterConfigTest, StoreModeIsAutoUnlessSetAndAnUnknownOneIsAnError) {
  Result<ClusterConfig> plain = Parse(WithNodes(""));
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->store_mode, "auto");
  Result<ClusterConfig> exclusive = Parse(WithNodes("store_mode: exclusive\n"));
  ASSERT_TRUE(exclusive.ok()) << exclusive.status().ToString();
  EXPECT_EQ(exclusive->store_mode, "exclusive");
  EXPECT_THAT(ErrorOf(WithNodes("store_mode: nfs\n")), StartsWith("cluster.yaml:5: store_mode:"));
}

TEST(ClusterConfigTest, SyntaxAndShapeErrors) {
  EXPECT_THAT(ErrorOf("nodes:\n  - names: n1\n    cpus: [4\n"),
              StartsWith("cluster.yaml:4: YAML syntax error"));
  EXPECT_THAT(ErrorOf("nodes:\n  - names: n1\n    cpus: 4\n    cpus: 8\n"),
              StartsWith("cluster.yaml:4: nodes[0].cpus: duplicate key"));
  EXPECT_THAT(ErrorOf("nodes:\n  names: n1\n"),
              StartsWith("cluster.yaml:2: nodes: expected a list"));
  EXPECT_THAT(ErrorOf("nodes:\n  - names: n1\n    cpus: [4]\n"),
              StartsWith("cluster.yaml:3: nodes[0].cpus: expected a single value, found a list"));
  EXPECT_THAT(ErrorOf("- a\n- b\n"), StartsWith("cluster.yaml:1: expected a map"));
}

// ---------------------------------------------------------------------------------------------
// Associations

TEST(ClusterConfigTest, AssociationForCreatesAndReuses) {
  Result<ClusterConfig> r = Parse(WithNodes(R"(
accounts:
  - name: research
users:
  - name: alice
    account: research
)"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ClusterConfig c = *std::move(r);
  ASSERT_EQ(c.base.associations.size(), 1u);
  EXPECT_EQ(c.AssociationFor("alice", "research"), 0u);
  EXPECT_EQ(c.AssociationFor("alice", ""), 0u);  // her first association
  EXPECT_EQ(c.base.associations.size(), 1u);

  // A user the file does not name, without an account: the account "default" under root.
  const std::uint32_t zed = c.AssociationFor("zed", "");
  EXPECT_EQ(zed, 1u);
  EXPECT_EQ(c.users, (std::vector<std::string>{"alice", "zed"}));
  const std::uint32_t def = c.AccountIndex("default");
  ASSERT_NE(def, kNone);
  EXPECT_EQ(c.base.accounts[def].parent, 0u);
  EXPECT_EQ(c.base.accounts[def].shares, 1u);
  EXPECT_EQ(c.base.associations[zed].user, 1u);
  EXPECT_EQ(c.base.associations[zed].account, def);
  EXPECT_EQ(c.base.associations[zed].shares, 1u);
  EXPECT_EQ(c.AssociationFor("zed", ""), zed);
  EXPECT_EQ(c.AssociationFor("zed", "default"), zed);

  // Known user, new account; known account, new user.
  const std::uint32_t alice_proj = c.AssociationFor("alice", "proj");
  EXPECT_EQ(alice_proj, 2u);
  EXPECT_EQ(c.base.accounts[c.AccountIndex("proj")].parent, 0u);
  EXPECT_EQ(c.AssociationFor("bob", "research"), 3u);
  EXPECT_EQ(c.base.associations[3].account, c.AccountIndex("research"));
  EXPECT_EQ(c.AssociationFor("alice", "proj"), alice_proj);
  EXPECT_EQ(c.AssociationFor("alice", ""), 0u);
  EXPECT_EQ(c.base.associations.size(), 4u);
  EXPECT_EQ(c.base.accounts.size(), 4u);  // root, research, default, proj

  // Tables changed behind its back are picked up.
  c.users.push_back("yan");
  c.base.associations.push_back({3, 1, 1, 0});
  EXPECT_EQ(c.AssociationFor("yan", ""), 4u);
  ClusterConfig copy = c;
  EXPECT_EQ(copy.AssociationFor("yan", "research"), 4u);
  EXPECT_EQ(copy.AssociationFor("zed", ""), zed);
}

// ---------------------------------------------------------------------------------------------
// Files and the homogeneous cluster

TEST(ClusterConfigTest, LoadReportsMissingFile) {
  Result<ClusterConfig> r = LoadClusterConfig("/nonexistent/cluster.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_THAT(r.status().message(), HasSubstr("/nonexistent/cluster.yaml"));
}

TEST(ClusterConfigTest, HomogeneousCluster) {
  ClusterConfig c = HomogeneousCluster(3, 32, 256000, 4, "a100");
  const engine::Snapshot& s = c.base;
  ASSERT_EQ(s.nodes.size(), 3u);
  EXPECT_EQ(s.nodes[0].name, "node1");
  EXPECT_EQ(s.nodes[2].name, "node3");
  EXPECT_EQ(s.nodes[1].cpus, 32);
  EXPECT_EQ(s.nodes[1].mem_mb, 256000);
  ASSERT_EQ(s.nodes[1].gpus.size(), 4u);
  EXPECT_EQ(s.nodes[1].gpus[3].index, 3);
  EXPECT_EQ(s.gpu_types, std::vector<std::string>{"a100"});
  ASSERT_EQ(s.partitions.size(), 1u);
  EXPECT_EQ(s.partitions[0].name, "batch");
  EXPECT_EQ(s.partitions[0].nodes, (std::vector<std::uint32_t>{0, 1, 2}));
  EXPECT_EQ(c.default_partition, 0u);
  EXPECT_EQ(c.QosIndex("normal"), c.default_qos);
  ASSERT_EQ(s.accounts.size(), 1u);
  EXPECT_EQ(s.accounts[0].name, "root");
  EXPECT_TRUE(s.associations.empty());
  EXPECT_EQ(c.policy.reservation_depth, engine::PolicyOptions{}.reservation_depth);

  ClusterConfig cpu = HomogeneousCluster(2, 8, 1000, 0, "", "cn");
  EXPECT_EQ(cpu.base.nodes[1].name, "cn2");
  EXPECT_TRUE(cpu.base.gpu_types.empty());
  EXPECT_TRUE(cpu.base.nodes[0].gpus.empty());
  EXPECT_EQ(HomogeneousCluster(1, 1, 1, 2, "").base.gpu_types, std::vector<std::string>{"gpu"});

  EXPECT_EQ(cpu.AssociationFor("u", ""), 0u);
  EXPECT_EQ(cpu.base.accounts[cpu.base.associations[0].account].name, "default");
}

}  // namespace
}  // namespace lockstep::config
