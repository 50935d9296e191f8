// The `kubernetes:` section of the cluster YAML and the --backend override.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/cluster_config_test_util.h"

namespace lockstep::config {
namespace {

using test::ErrorOf;
using test::Parse;
using ::testing::HasSubstr;

TEST(KubernetesSettings, DefaultsWithoutTheSection) {
  Result<ClusterConfig> c = Parse(test::kFourNodes);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const KubernetesSettings& k = c->kubernetes;
  EXPECT_EQ(k.kubeconfig, "");
  EXPECT_EQ(k.ns, "lockstep");
  EXPECT_EQ(k.pods, KubernetesSettings::Pods::kPerNode);
  EXPECT_EQ(k.switch_labels.size(), 3u);
  EXPECT_EQ(k.block_label, "nvidia.com/gpu.clique");
  EXPECT_FALSE(k.leader_elect);
  EXPECT_EQ(k.lease_name, "lockstepd");
  EXPECT_EQ(k.bind_qps, 0);  // Bindings at the apiserver's pace
  EXPECT_EQ(k.finished_pod_ttl, 24 * 3600);
  EXPECT_EQ(c->backend, "agent");
}

TEST(KubernetesSettings, EveryKeyWithoutNodes) {
  Result<ClusterConfig> c = Parse(R"(
backend: kubernetes
kubernetes:
  kubeconfig: /etc/lockstep/kubeconfig
  context: prod
  namespace: batch
  image: nvcr.io/nvidia/pytorch:24.01-py3
  pods: per-task
  switch_labels: []
  block_label: example.com/nvl
  node_selector: pool=gpu
  ignored_taints: [example.com/maintenance]
  master_port: 12355
  qps: 50.5
  burst: 100
  bind_qps: 1000
  leader_elect: true
  lease_name: lockstepd-a
  finished_pod_ttl: 3600
partitions:
  - name: gpu
    nodes: ALL
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const KubernetesSettings& k = c->kubernetes;
  EXPECT_EQ(c->backend, "kubernetes");
  EXPECT_TRUE(c->base.nodes.empty());
  EXPECT_EQ(k.kubeconfig, "/etc/lockstep/kubeconfig");
  EXPECT_EQ(k.context, "prod");
  EXPECT_EQ(k.ns, "batch");
  EXPECT_EQ(k.image, "nvcr.io/nvidia/pytorch:24.01-py3");
  EXPECT_EQ(k.pods, KubernetesSettings::Pods::kPerTask);
  EXPECT_TRUE(k.switch_labels.empty());
  EXPECT_EQ(k.block_label, "example.com/nvl");
  EXPECT_EQ(k.node_selector, "pool=gpu");
  EXPECT_EQ(k.ignored_taints, std::vector<std::string>{"example.com/maintenance"});
  EXPECT_EQ(k.master_port, 12355);
  EXPECT_DOUBLE_EQ(k.qps, 50.5);
  EXPECT_EQ(k.burst, 100);
  EXPECT_DOUBLE_EQ(k.bind_qps, 1000);
  EXPECT_TRUE(k.leader_elect);
  EXPECT_EQ(k.lease_name, "lockstepd-a");
  EXPECT_EQ(k.finished_pod_ttl, 3600);
}

TEST(KubernetesSettings, FinishedPodTtlInSecondsOrSlurmTimes) {
  auto ttl = [](const std::string& value) {
    Result<ClusterConfig> c =
        Parse(test::WithNodes("kubernetes:\n  finished_pod_ttl: " + value + "\n"));
    EXPECT_TRUE(c.ok()) << value << ": " << c.status().ToString();
    return c.ok() ? c->kubernetes.finished_pod_ttl : Seconds{-1};
  };
  EXPECT_EQ(ttl("0"), 0);  // deleted as soon as the run ends
  EXPECT_EQ(ttl("90"), 90);
  EXPECT_EQ(ttl("30:00"), 1800);
  EXPECT_EQ(ttl("7-00:00:00"), 7 * 24 * 3600);
  EXPECT_EQ(ttl("UNLIMITED"), kUnlimited);  // kept until someone deletes them
}

TEST(KubernetesSettings, ErrorsNameTheKey) {
  EXPECT_THAT(ErrorOf(test::WithNodes("kubernetes:\n  pods: per-gpu\n")),
              HasSubstr("cluster.yaml:6: kubernetes.pods: 'per-gpu' is not one of"));
  EXPECT_THAT(ErrorOf(test::WithNodes("kubernetes:\n  qps: fast\n")),
              HasSubstr("kubernetes.qps: 'fast' is not a number"));
  EXPECT_THAT(ErrorOf(test::WithNodes("kubernetes:\n  bind_qps: 10/s\n")),
              HasSubstr("kubernetes.bind_qps: '10/s' is not a number"));
  EXPECT_THAT(ErrorOf(test::WithNodes("kubernetes:\n  namespce: x\n")), HasSubstr("namespce"));
  EXPECT_THAT(ErrorOf(test::WithNodes("kubernetes:\n  namespace: \"\"\n")),
              HasSubstr("kubernetes.namespace: must not be empty"));
  EXPECT_THAT(ErrorOf(test::WithNodes("kubernetes:\n  finished_pod_ttl: -5\n")),
              HasSubstr("cluster.yaml:6: kubernetes.finished_pod_ttl: must not be negative"));
  EXPECT_THAT(ErrorOf(test::WithNodes("kubernetes:\n  finished_pod_ttl: a day\n")),
              HasSubstr("kubernetes.finished_pod_ttl: 'a day' is not a Slurm duration"));
}

TEST(KubernetesSettings, BackendOverride) {
  const char* text = "partitions:\n  - name: gpu\n    nodes: ALL\n";
  EXPECT_FALSE(ParseClusterConfig(text, "cluster.yaml").ok());  // agents need nodes
  Result<ClusterConfig> c = ParseClusterConfig(text, "cluster.yaml", "kubernetes");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->backend, "kubernetes");
}

}  // namespace
}  // namespace lockstep::config
