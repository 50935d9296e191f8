#include "backend/kubernetes/objects/pod_usage.h"

#include <gtest/gtest.h>

#include "backend/kubernetes/objects/objects_test_util.h"

namespace lockstep::kube {
namespace {

using nlohmann::json;

constexpr std::int64_t kGi = 1024LL * 1024 * 1024;
constexpr std::int64_t kMi = 1024LL * 1024;

PodResources Requests(const json& pod) {
  Result<PodResources> r = PodRequests(pod);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : PodResources{};
}

TEST(PodRequests, AppContainersSumAndInitContainersTakeTheMax) {
  // Apps: 1500m + 100m cpu, 12Gi + 64Mi memory, 2 GPUs; init: 4 cpu, 8Gi.
  PodResources r = Requests(testing::ForeignPod());
  EXPECT_EQ(r.cpu_milli, 4000);                    // the init container's 4 > 1.6
  EXPECT_EQ(r.memory_bytes, 12 * kGi + 64 * kMi);  // the apps' 12.06Gi > 8Gi
  EXPECT_EQ(r.Devices("nvidia.com/gpu"), 2);
  EXPECT_EQ(r.devices.size(), 1u);
}

TEST(PodRequests, OverheadIsAdded) {
  json pod = testing::ForeignPod();
  pod["spec"]["overhead"] = {{"cpu", "250m"}, {"memory", "120Mi"}};
  PodResources r = Requests(pod);
  EXPECT_EQ(r.cpu_milli, 4250);
  EXPECT_EQ(r.memory_bytes, 12 * kGi + 184 * kMi);
}

TEST(PodRequests, LimitsStandInForMissingRequests) {
  json pod = testing::ForeignPod();
  pod["spec"].erase("initContainers");
  pod["spec"]["containers"][0]["resources"] = {
      {"limits", {{"cpu", "2"}, {"memory", "1Gi"}, {"nvidia.com/mig-1g.10gb", "1"}}},
      {"requests", {{"cpu", "500m"}}}};
  PodResources r = Requests(pod);
  EXPECT_EQ(r.cpu_milli, 600);  // the request, not the limit; plus the metrics container
  EXPECT_EQ(r.memory_bytes, 1 * kGi + 64 * kMi);
  EXPECT_EQ(r.Devices("nvidia.com/mig-1g.10gb"), 1);
  EXPECT_EQ(r.Devices("nvidia.com/gpu"), 0);
}

TEST(PodRequests, SidecarInitContainersRunAlongTheApps) {
  json pod = testing::ForeignPod();
  json sidecar = {{"name", "proxy"},
                  {"image", "envoy"},
                  {"restartPolicy", "Always"},
                  {"resources", {{"requests", {{"cpu", "1"}, {"memory", "1Gi"}}}}}};
  // Sidecar first: the init container "fetch-model" runs beside it (4 + 1 = 5 cpu), and the
  // apps too (1.6 + 1 = 2.6).
  pod["spec"]["initContainers"].insert(pod["spec"]["initContainers"].begin(), sidecar);
  PodResources r = Requests(pod);
  EXPECT_EQ(r.cpu_milli, 5000);
  EXPECT_EQ(r.memory_bytes, 13 * kGi + 64 * kMi);
}

TEST(PodRequests, BadQuantityNamesPodAndField) {
  json pod = testing::ForeignPod();
  pod["spec"]["containers"][1]["resources"]["requests"]["memory"] = "64MB";
  Result<PodResources> r = PodRequests(pod);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind(
                "pod serving/inference-7d9f8b6c5-x2kqp: spec.containers[1].resources.requests."
                "memory: invalid quantity \"64MB\"",
                0),
            0u)
      << r.status().message();
}

TEST(PodOccupiesNode, BoundAndNotEnded) {
  json pod = testing::ForeignPod();
  EXPECT_TRUE(PodOccupiesNode(pod));
  pod["metadata"]["deletionTimestamp"] = "2024-05-01T12:40:00Z";  // terminating: still there
  EXPECT_TRUE(PodOccupiesNode(pod));
  pod["status"]["phase"] = "Succeeded";
  EXPECT_FALSE(PodOccupiesNode(pod));
  pod["status"]["phase"] = "Failed";
  EXPECT_FALSE(PodOccupiesNode(pod));
  pod = testing::ForeignPod();
  pod["spec"].erase("nodeName");
  pod["status"]["phase"] = "Pending";
  EXPECT_FALSE(PodOccupiesNode(pod));
}

TEST(ForeignUsage, SumsPodsOfOtherSchedulersByNode) {
  json a = testing::ForeignPod();
  json b = testing::ForeignPod();
  b["metadata"]["name"] = "inference-7d9f8b6c5-abcde";
  json elsewhere = testing::ForeignPod();
  elsewhere["spec"]["nodeName"] = "gpu-a-08";
  json done = testing::ForeignPod();
  done["status"]["phase"] = "Succeeded";
  json ours = testing::ForeignPod();
  ours["metadata"]["labels"][kJobIdLabel] = "42";
  json gang = testing::GangPod("bert-large-worker-0");
  gang["spec"]["nodeName"] = "gpu-a-07";
  EXPECT_TRUE(IsLockstepPod(ours));
  EXPECT_TRUE(IsLockstepPod(gang));
  EXPECT_FALSE(IsLockstepPod(a));

  Result<std::map<std::string, PodResources>> used =
      ForeignUsageByNode({a, b, elsewhere, done, ours, gang});
  ASSERT_TRUE(used.ok()) << used.status().ToString();
  ASSERT_EQ(used->size(), 2u);
  const PodResources& n7 = used->at("gpu-a-07");
  EXPECT_EQ(n7.cpu_milli, 8000);
  EXPECT_EQ(n7.Devices("nvidia.com/gpu"), 4);
  EXPECT_EQ(used->at("gpu-a-08").cpu_milli, 4000);
}

TEST(WithoutUsage, TakesWhatForeignPodsUse) {
  Result<KubeNode> node = NodeFromObject(testing::GpuNode(), {});
  ASSERT_TRUE(node.ok());
  KubeNode n = *node;
  n.gpus.push_back({"mig-1g.10gb", 2, "nvidia.com/mig-1g.10gb"});
  PodResources used;
  used.cpu_milli = 4690;  // 95690m - 4690m = 91 CPUs
  used.memory_bytes = 1024 * kMi;
  used.devices["nvidia.com/gpu"] = 3;
  used.devices["nvidia.com/mig-1g.10gb"] = 2;
  KubeNode left = WithoutUsage(n, used);
  EXPECT_EQ(left.cpus, 91);
  EXPECT_EQ(left.mem_mb, n.mem_mb - 1024);
  ASSERT_EQ(left.gpus.size(), 1u);
  EXPECT_EQ(left.gpus[0].count, 5);
  used.cpu_milli = 1000000;
  EXPECT_EQ(WithoutUsage(n, used).cpus, 0);
}

}  // namespace
}  // namespace lockstep::kube
