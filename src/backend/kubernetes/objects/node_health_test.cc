// A Node's conditions and allocatable GPUs as health findings (node_health.h).
#include "backend/kubernetes/objects/node_health.h"

#include <gtest/gtest.h>

namespace lockstep::kube {
namespace {

nlohmann::json NodeWith(nlohmann::json conditions, const std::string& capacity,
                        const std::string& allocatable) {
  return {{"metadata", {{"name", "gpu-1"}}},
          {"status",
           {{"conditions", conditions},
            {"capacity", {{"nvidia.com/gpu", capacity}}},
            {"allocatable", {{"nvidia.com/gpu", allocatable}}}}}};
}

std::vector<TroubleCondition> Defaults() {
  return {*ParseTroubleCondition("XidCriticalError"),
          *ParseTroubleCondition("AcceleratedHardwareReady=False")};
}

TEST(NodeHealth, TroubleConditionsAndAGpuTakenAway) {
  nlohmann::json node = NodeWith(
      {{{"type", "Ready"}, {"status", "True"}},
       {{"type", "XidCriticalError"}, {"status", "True"}, {"reason", "Xid79"},
        {"message", "GPU 0000:3b:00 fell off the bus"}},
       {{"type", "AcceleratedHardwareReady"}, {"status", "False"}, {"reason", "NeuronError"}}},
      "8", "7");
  backend::NodeHealthReport r = NodeHealthFromObject(node, Defaults(), "nvidia.com/gpu");
  EXPECT_EQ(r.node, "gpu-1");
  EXPECT_EQ(r.source, "k8s");
  EXPECT_TRUE(r.full_round);
  ASSERT_EQ(r.findings.size(), 3u);
  EXPECT_EQ(r.findings[0].check, "k8s_condition");
  EXPECT_EQ(r.findings[0].detail, "XidCriticalError=True: Xid79: GPU 0000:3b:00 fell off the bus");
  EXPECT_EQ(r.findings[1].detail, "AcceleratedHardwareReady=False: NeuronError");
  EXPECT_EQ(r.findings[2].check, "gpu_count");
  EXPECT_EQ(r.findings[2].detail, "allocatable nvidia.com/gpu 7 of capacity 8");
}

TEST(NodeHealth, AHealthyNodeHasNoFindings) {
  nlohmann::json node = NodeWith({{{"type", "XidCriticalError"}, {"status", "False"}},
                                  {{"type", "AcceleratedHardwareReady"}, {"status", "True"}}},
                                 "8", "8");
  EXPECT_TRUE(NodeHealthFromObject(node, Defaults(), "nvidia.com/gpu").findings.empty());
}

TEST(NodeHealth, ConditionEntries) {
  EXPECT_EQ(ParseTroubleCondition("KernelDeadlock")->bad_status, "True");
  EXPECT_EQ(ParseTroubleCondition("GpuReady=False")->type, "GpuReady");
  EXPECT_FALSE(ParseTroubleCondition("=True").ok());
  EXPECT_FALSE(ParseTroubleCondition("GpuReady=no").ok());
}

}  // namespace
}  // namespace lockstep::kube
