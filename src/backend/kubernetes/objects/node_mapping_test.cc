#include "backend/kubernetes/objects/node_mapping.h"

#include <gtest/gtest.h>

#include "backend/kubernetes/objects/objects_test_util.h"

namespace lockstep::kube {
namespace {

using nlohmann::json;

KubeNode Map(const json& node, const NodeMappingOptions& o = {}) {
  Result<KubeNode> n = NodeFromObject(node, o);
  EXPECT_TRUE(n.ok()) << n.status().ToString();
  return n.ok() ? *n : KubeNode{};
}

json Condition(const std::string& status, const std::string& reason, const std::string& message) {
  return {{"type", "Ready"},
          {"status", status},
          {"lastHeartbeatTime", "2024-05-01T12:00:00Z"},
          {"lastTransitionTime", "2024-05-01T12:00:00Z"},
          {"reason", reason},
          {"message", message}};
}

TEST(GpuType, FromProduct) {
  EXPECT_EQ(GpuTypeFromProduct("NVIDIA-A100-SXM4-80GB"), "a100");
  EXPECT_EQ(GpuTypeFromProduct("A100-SXM4-40GB"), "a100");
  EXPECT_EQ(GpuTypeFromProduct("NVIDIA-H100-80GB-HBM3"), "h100");
  EXPECT_EQ(GpuTypeFromProduct("Tesla-T4"), "t4");
  EXPECT_EQ(GpuTypeFromProduct("Tesla-V100-SXM2-16GB"), "v100");
  EXPECT_EQ(GpuTypeFromProduct("NVIDIA-L40S"), "l40s");
  EXPECT_EQ(GpuTypeFromProduct("NVIDIA-GeForce-RTX-3090"), "rtx3090");
  EXPECT_EQ(GpuTypeFromProduct("Quadro-RTX-6000"), "rtx6000");
  EXPECT_EQ(GpuTypeFromProduct("NVIDIA-GH200-480GB"), "gh200");
  EXPECT_EQ(GpuTypeFromProduct("A100-SXM4-40GB-MIG-1g.5gb"), "mig-1g.5gb");
  EXPECT_EQ(GpuTypeFromProduct(""), "gpu");
  EXPECT_EQ(GpuTypeFromProduct("NVIDIA"), "gpu");
  NodeMappingOptions o;
  o.gpu_type_by_product["NVIDIA-H100-80GB-HBM3"] = "h100_80g";
  EXPECT_EQ(GpuTypeFromProduct("NVIDIA-H100-80GB-HBM3", o), "h100_80g");
}

TEST(NodeMapping, ReadyGpuNode) {
  KubeNode n = Map(testing::GpuNode());
  EXPECT_EQ(n.name, "gpu-a-07");
  EXPECT_EQ(n.cpu_milli, 95690);
  EXPECT_EQ(n.cpus, 95);                   // floor of 95.69
  EXPECT_EQ(n.mem_mb, 1175470920 / 1024);  // Ki to MiB, rounded down
  EXPECT_EQ(n.gpu_product, "NVIDIA-A100-SXM4-80GB");
  ASSERT_EQ(n.gpus.size(), 1u);
  EXPECT_EQ(n.gpus[0], (GpuGroup{"a100", 8, "nvidia.com/gpu"}));
  EXPECT_EQ(n.features, (std::vector<std::string>{"ampere", "ib"}));  // nvme=false is not one
  EXPECT_EQ(n.switch_path, (std::vector<std::string>{"us-east-1a", "r07"}));
  EXPECT_EQ(n.block, "7b3c1f9e-aa01-4c2d-8e11-000000000001.1");
  EXPECT_EQ(n.state, engine::NodeState::kUp);
  EXPECT_EQ(n.reason, "");
  EXPECT_EQ(n.weight, 1);
}

TEST(NodeMapping, MixedMigNode) {
  json node = testing::GpuNode();
  json& alloc = node["status"]["allocatable"];
  alloc["nvidia.com/gpu"] = "4";
  alloc["nvidia.com/mig-3g.40gb"] = "4";
  alloc["nvidia.com/mig-1g.10gb"] = "14";
  alloc["nvidia.com/mig-2g.20gb"] = "0";
  KubeNode n = Map(node);
  ASSERT_EQ(n.gpus.size(), 3u);
  EXPECT_EQ(n.gpus[0], (GpuGroup{"a100", 4, "nvidia.com/gpu"}));
  EXPECT_EQ(n.gpus[1], (GpuGroup{"mig-1g.10gb", 14, "nvidia.com/mig-1g.10gb"}));
  EXPECT_EQ(n.gpus[2], (GpuGroup{"mig-3g.40gb", 4, "nvidia.com/mig-3g.40gb"}));
}

TEST(NodeMapping, SingleMigStrategyTypesGpusByProfile) {
  json node = testing::GpuNode();
  node["metadata"]["labels"]["nvidia.com/gpu.product"] = "A100-SXM4-40GB-MIG-1g.5gb";
  node["status"]["allocatable"]["nvidia.com/gpu"] = "56";
  KubeNode n = Map(node);
  ASSERT_EQ(n.gpus.size(), 1u);
  EXPECT_EQ(n.gpus[0], (GpuGroup{"mig-1g.5gb", 56, "nvidia.com/gpu"}));
}

TEST(NodeMapping, TooManyDevicesOrTypes) {
  json node = testing::GpuNode();
  node["status"]["allocatable"]["nvidia.com/gpu"] = "80";  // time-slicing, 10 replicas
  Result<KubeNode> n = NodeFromObject(node, {});
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("node gpu-a-07: status.allocatable.nvidia.com/gpu"),
            std::string::npos)
      << n.status().message();
  node = testing::GpuNode();
  for (const char* p : {"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb"})
    node["status"]["allocatable"][std::string("nvidia.com/mig-") + p] = "1";
  n = NodeFromObject(node, {});
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("5 GPU types"), std::string::npos) << n.status().message();
}

TEST(NodeMapping, BadQuantityNamesNodeAndField) {
  json node = testing::GpuNode();
  node["status"]["allocatable"]["memory"] = "lots";
  Result<KubeNode> n = NodeFromObject(node, {});
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().message(),
            "node gpu-a-07: status.allocatable.memory: invalid quantity \"lots\": expected a "
            "number with an optional suffix (m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or "
            "e<exponent>)");
  EXPECT_FALSE(NodeFromObject(json::object(), {}).ok());
  node = testing::GpuNode();
  node["status"].erase("allocatable");
  EXPECT_FALSE(NodeFromObject(node, {}).ok());
}

TEST(NodeMapping, CordonedDrains) {
  json node = testing::GpuNode();
  node["spec"]["unschedulable"] = true;
  node["spec"]["taints"] = json::array({{{"key", "node.kubernetes.io/unschedulable"},
                                         {"effect", "NoSchedule"},
                                         {"timeAdded", "2024-05-01T12:30:00Z"}}});
  KubeNode n = Map(node);
  EXPECT_EQ(n.state, engine::NodeState::kDrain);
  EXPECT_EQ(n.reason, "cordoned");
}

TEST(NodeMapping, NotReadyOrUnknownOrMissingIsDown) {
  json node = testing::GpuNode();
  node["status"]["conditions"][3] =
      Condition("False", "KubeletNotReady", "container runtime network not ready");
  node["spec"]["unschedulable"] = true;  // DOWN wins over DRAIN
  KubeNode n = Map(node);
  EXPECT_EQ(n.state, engine::NodeState::kDown);
  EXPECT_EQ(n.reason, "KubeletNotReady: container runtime network not ready");

  node["status"]["conditions"][3] =
      Condition("Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.");
  n = Map(node);
  EXPECT_EQ(n.state, engine::NodeState::kDown);
  EXPECT_EQ(n.reason, "NodeStatusUnknown: Kubelet stopped posting node status.");

  node["status"]["conditions"].erase(3);
  n = Map(node);
  EXPECT_EQ(n.state, engine::NodeState::kDown);
  EXPECT_EQ(n.reason, "no Ready condition");

  node["status"]["conditions"][0] = {{"type", "Ready"}, {"status", "False"}};
  EXPECT_EQ(Map(node).reason, "NotReady");
}

TEST(NodeMapping, NoExecuteTaintIsDown) {
  json node = testing::GpuNode();
  node["spec"]["taints"] =
      json::array({{{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}},
                   {{"key", "nvsentinel.nvidia.com/xid-79"},
                    {"value", "true"},
                    {"effect", "NoExecute"},
                    {"timeAdded", "2024-05-01T12:31:00Z"}}});
  KubeNode n = Map(node);
  EXPECT_EQ(n.state, engine::NodeState::kDown);
  EXPECT_EQ(n.reason, "nvsentinel.nvidia.com/xid-79");

  NodeMappingOptions o;
  o.ignored_taints = {"nvsentinel.nvidia.com/xid-79"};
  EXPECT_EQ(Map(node, o).state, engine::NodeState::kUp);  // NoSchedule taints never count
}

TEST(NodeMapping, WeightLabel) {
  json node = testing::GpuNode();
  node["metadata"]["labels"]["lockstep.dev/weight"] = "10";
  EXPECT_EQ(Map(node).weight, 10);
  node["metadata"]["labels"]["lockstep.dev/weight"] = "ten";
  Result<KubeNode> n = NodeFromObject(node, {});
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("\"ten\" is not a positive integer"), std::string::npos);
}

TEST(NodeMapping, ConfigurableLabels) {
  json node = testing::GpuNode();
  NodeMappingOptions o;
  o.switch_labels = {"topology.kubernetes.io/region", "topology.kubernetes.io/zone"};
  o.block_label = "";
  o.feature_labels = {"node.kubernetes.io/instance-type"};
  o.feature_label_prefix = "";
  KubeNode n = Map(node, o);
  EXPECT_EQ(n.switch_path, (std::vector<std::string>{"us-east-1", "us-east-1a"}));
  EXPECT_EQ(n.block, "");
  EXPECT_EQ(n.features, (std::vector<std::string>{"p4de.24xlarge"}));
}

KubeNode Node(const std::string& name, const std::string& zone, const std::string& rack,
              const std::string& clique) {
  json node = testing::GpuNode();
  node["metadata"]["name"] = name;
  json& labels = node["metadata"]["labels"];
  labels["topology.kubernetes.io/zone"] = zone;
  if (rack.empty())
    labels.erase("topology.lockstep.dev/rack");
  else
    labels["topology.lockstep.dev/rack"] = rack;
  if (clique.empty())
    labels.erase("nvidia.com/gpu.clique");
  else
    labels["nvidia.com/gpu.clique"] = clique;
  return Map(node);
}

TEST(AddNodes, TopologyIsASwitchTreeAndBlocks) {
  std::vector<KubeNode> nodes = {Node("n1", "za", "r1", "c1"), Node("n2", "za", "r1", "c1"),
                                 Node("n3", "za", "r2", "c2"), Node("n4", "zb", "r1", ""),
                                 Node("n5", "zb", "", "")};
  engine::Snapshot base;
  base.gpu_types = {"gpu", "a100"};
  Result<engine::Snapshot> s = AddNodes(base, nodes);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->switches.size(), 5u);
  auto sw = [&](std::uint32_t i) { return s->switches[i].name; };
  EXPECT_EQ(sw(0), "za");
  EXPECT_EQ(sw(1), "za/r1");
  EXPECT_EQ(sw(2), "za/r2");
  EXPECT_EQ(sw(3), "zb");
  EXPECT_EQ(sw(4), "zb/r1");  // r1 of zone zb is not r1 of zone za
  EXPECT_EQ(s->switches[0].parent, engine::kNone);
  EXPECT_EQ(s->switches[1].parent, 0u);
  EXPECT_EQ(s->switches[2].parent, 0u);
  EXPECT_EQ(s->switches[4].parent, 3u);
  EXPECT_EQ(s->blocks, (std::vector<std::string>{"c1", "c2"}));
  ASSERT_EQ(s->nodes.size(), 5u);
  EXPECT_EQ(s->nodes[0].leaf_switch, 1u);
  EXPECT_EQ(s->nodes[1].leaf_switch, 1u);
  EXPECT_EQ(s->nodes[2].leaf_switch, 2u);
  EXPECT_EQ(s->nodes[3].leaf_switch, 4u);
  EXPECT_EQ(s->nodes[4].leaf_switch, 3u);  // no rack: its zone is its leaf
  EXPECT_EQ(s->nodes[0].block, 0u);
  EXPECT_EQ(s->nodes[2].block, 1u);
  EXPECT_EQ(s->nodes[3].block, engine::kNone);
  // GPU types interned into the existing table; devices numbered from 0.
  EXPECT_EQ(s->gpu_types, (std::vector<std::string>{"gpu", "a100"}));
  ASSERT_EQ(s->nodes[0].gpus.size(), 8u);
  EXPECT_EQ(s->nodes[0].gpus[7].index, 7);
  EXPECT_EQ(s->nodes[0].gpus[7].type, 1u);
  EXPECT_EQ(s->nodes[0].gpus[7].parent, -1);
  EXPECT_EQ(s->features, (std::vector<std::string>{"ampere", "ib"}));
  EXPECT_EQ(s->nodes[0].features, 3u);
  EXPECT_EQ(s->nodes[0].cpus, 95);
  EXPECT_EQ(s->nodes[0].state, engine::NodeState::kUp);

  Result<engine::Snapshot> twice = AddNodes(*s, {nodes[0]});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message(), "node n1: defined twice");
}

TEST(AddNodes, MigDevicesAndStateCarryOver) {
  json node = testing::GpuNode();
  node["status"]["allocatable"]["nvidia.com/gpu"] = "1";
  node["status"]["allocatable"]["nvidia.com/mig-1g.10gb"] = "7";
  node["spec"]["unschedulable"] = true;
  Result<engine::Snapshot> s = AddNodes({}, {Map(node)});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->gpu_types, (std::vector<std::string>{"a100", "mig-1g.10gb"}));
  const engine::Node& n = s->nodes[0];
  ASSERT_EQ(n.gpus.size(), 8u);
  EXPECT_EQ(n.gpus[0].type, 0u);
  EXPECT_EQ(n.gpus[1].type, 1u);
  EXPECT_EQ(n.gpus[7].index, 7);
  EXPECT_EQ(n.state, engine::NodeState::kDrain);
  EXPECT_EQ(n.reason, "cordoned");
}

TEST(AddNodes, AtMost64Features) {
  std::vector<KubeNode> nodes(1);
  nodes[0].name = "n";
  for (int i = 0; i < 65; ++i) nodes[0].features.push_back("f" + std::to_string(i));
  Result<engine::Snapshot> s = AddNodes({}, nodes);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("more than 64"), std::string::npos);
}

}  // namespace
}  // namespace lockstep::kube
