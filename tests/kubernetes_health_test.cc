// Fleet health on Kubernetes against a real apiserver (docs/health.md, "On Kubernetes"): a
// trouble condition set on a Node drains it with a "k8s:" reason, cleared it resumes; a drop in
// allocatable GPUs drains too; an operator's drain outlives the condition's end.
#include <gtest/gtest.h>

#include "tests/kubernetes_test_fixture.h"

namespace lockstep::testing {
namespace {

void SetCondition(KubeClient& kc, const std::string& node, const std::string& status) {
  Json patch = {{"status",
                 {{"conditions",
                   {{{"type", "XidCriticalError"},
                     {"status", status},
                     {"reason", status == "True" ? "Xid79" : "NoXid"},
                     {"message", status == "True" ? "GPU 3 fell off the bus" : "ok"}}}}}}};
  Result<Json> s = kc.Patch(kube::NodePath(node) + "/status", kube::PatchType::kStrategicMerge,
                            patch);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
}

void SetAllocatableGpus(KubeClient& kc, const std::string& node, int gpus) {
  Json patch = {{"status", {{"allocatable", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}};
  Result<Json> s = kc.Patch(kube::NodePath(node) + "/status", kube::PatchType::kStrategicMerge,
                            patch);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
}

std::string NodeState(Cluster& c, const std::string& name, std::string* reason = nullptr) {
  for (const auto& n : c.Get("/api/v1/nodes").value("nodes", Json::array()))
    if (n["name"] == name) {
      if (reason) *reason = n.value("reason", "");
      return n.value("state", "");
    }
  return "";
}

TEST_F(KubernetesBackendTest, NodeConditionsAndAllocatableGpusDrainWithAK8sReason) {
  const std::string ns = "kbe-h";
  CreateNode(ns, "kbe-h-1", 8);
  CreateNode(ns, "kbe-h-2", 8);
  std::unique_ptr<Cluster> c = StartLockstepd(ns, 2);
  std::string reason;

  SetCondition(kc(), "kbe-h-1", "True");
  ASSERT_TRUE(WaitFor([&] { return NodeState(*c, "kbe-h-1", &reason) == "drained"; }, kWait));
  EXPECT_EQ(reason, "k8s: XidCriticalError=True: Xid79: GPU 3 fell off the bus");
  SetCondition(kc(), "kbe-h-1", "False");
  ASSERT_TRUE(WaitFor([&] { return NodeState(*c, "kbe-h-1", &reason) == "idle"; }, kWait))
      << reason;

  SetAllocatableGpus(kc(), "kbe-h-2", 7);
  ASSERT_TRUE(WaitFor([&] { return NodeState(*c, "kbe-h-2", &reason) == "drained"; }, kWait));
  EXPECT_EQ(reason, "k8s: allocatable nvidia.com/gpu 7 of capacity 8");
  SetAllocatableGpus(kc(), "kbe-h-2", 8);
  ASSERT_TRUE(WaitFor([&] { return NodeState(*c, "kbe-h-2") == "idle"; }, kWait));

  // An operator's drain is the operator's: the condition's end does not clear it.
  SetCondition(kc(), "kbe-h-1", "True");
  ASSERT_TRUE(WaitFor([&] { return NodeState(*c, "kbe-h-1") == "drained"; }, kWait));
  CommandResult drain = c->Run(
      {"scontrol", "update", "NodeName=kbe-h-1", "State=DRAIN", "Reason=RMA GPU 3"});
  ASSERT_EQ(drain.exit_code, 0) << drain.err;
  SetCondition(kc(), "kbe-h-1", "False");
  // A barrier: the condition's end has reached lockstepd once the node's conditions are empty.
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const auto& n : c->Get("/api/v1/health").value("nodes", Json::array()))
          if (n["name"] == "kbe-h-1") return n.value("conditions", Json::array()).empty();
        return false;
      },
      kWait));
  EXPECT_EQ(NodeState(*c, "kbe-h-1", &reason), "drained");
  EXPECT_EQ(reason, "RMA GPU 3");
}

}  // namespace
}  // namespace lockstep::testing
