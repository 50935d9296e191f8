// The `health:` section of the cluster YAML (docs/health.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/cluster_config_test_util.h"

namespace lockstep::config {
namespace {

using test::ErrorOf;
using test::Parse;
using ::testing::HasSubstr;

TEST(HealthConfig, DefaultsWithoutTheSection) {
  Result<ClusterConfig> c = Parse(test::kFourNodes);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const HealthConfig& h = c->health;
  EXPECT_FALSE(h.configured);
  EXPECT_EQ(h.program, "");
  EXPECT_EQ(h.interval, 60);
  EXPECT_EQ(h.node_states, std::vector<std::string>{"ANY"});
  EXPECT_TRUE(h.xid_application.count(13));
  EXPECT_TRUE(h.xid_critical.count(79));
  EXPECT_TRUE(h.xid_warning.count(63));
  EXPECT_EQ(h.bad_gpu.count, 3);
  EXPECT_EQ(h.bad_gpu.window, 7 * 24 * 3600);
}

TEST(HealthConfig, EveryKey) {
  Result<ClusterConfig> c = Parse(std::string(test::kFourNodes) + R"(
health:
  program: /usr/sbin/nhc
  interval: 300
  timeout: 1:00
  node_states: IDLE,CYCLE
  xid:
    application: [13, 31]
    warning: [63]
    critical: [79, 48, 999]
  thresholds:
    xid: {count: 2, window: 3600}
    program: {count: 3}
  bad_gpu: {count: 5, window: 1-00:00:00}
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const HealthConfig& h = c->health;
  EXPECT_TRUE(h.configured);
  EXPECT_EQ(h.program, "/usr/sbin/nhc");
  EXPECT_EQ(h.interval, 300);
  EXPECT_EQ(h.timeout, 60);
  EXPECT_EQ(h.node_states, (std::vector<std::string>{"IDLE", "CYCLE"}));
  EXPECT_EQ(h.xid_application, (std::set<std::int64_t>{13, 31}));
  EXPECT_EQ(h.xid_critical, (std::set<std::int64_t>{48, 79, 999}));
  EXPECT_EQ(h.thresholds.at("xid").count, 2);
  EXPECT_EQ(h.thresholds.at("xid").window, 3600);
  EXPECT_EQ(h.thresholds.at("program").count, 3);
  EXPECT_EQ(h.thresholds.at("program").window, 0);
  EXPECT_EQ(h.bad_gpu.count, 5);
  EXPECT_EQ(h.bad_gpu.window, 24 * 3600);
}

TEST(HealthConfig, BadValuesNameTheirKey) {
  const std::string base = std::string(test::kFourNodes) + "health:\n";
  EXPECT_THAT(ErrorOf(base + "  program: nhc\n"), HasSubstr("health.program: must be an absolute"));
  EXPECT_THAT(ErrorOf(base + "  interval: 0\n"), HasSubstr("health.interval"));
  EXPECT_THAT(ErrorOf(base + "  node_states: IDLE,BUSY\n"), HasSubstr("'BUSY' is not one of"));
  EXPECT_THAT(ErrorOf(base + "  xid:\n    critical: [79, seventy]\n"),
              HasSubstr("health.xid.critical: 'seventy' is not an XID"));
  EXPECT_THAT(ErrorOf(base + "  thresholds:\n    fan: {count: 1}\n"),
              HasSubstr("unknown check 'fan'"));
  EXPECT_THAT(ErrorOf(base + "  thresholds:\n    xid: {count: 0}\n"),
              HasSubstr("health.thresholds.xid.count"));
  EXPECT_THAT(ErrorOf(base + "  bad_gpu: {count: 3, windows: 60}\n"), HasSubstr("windows"));
  EXPECT_THAT(ErrorOf(base + "  colour: red\n"), HasSubstr("colour"));
}

TEST(HealthConfig, KubernetesHealthConditions) {
  Result<ClusterConfig> c = Parse(test::kFourNodes);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kubernetes.health_conditions.front(), "XidCriticalError");
  c = Parse(std::string(test::kFourNodes) +
            "kubernetes:\n  health_conditions: [GpuReady=False, NicDown]\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->kubernetes.health_conditions,
            (std::vector<std::string>{"GpuReady=False", "NicDown"}));
  EXPECT_THAT(ErrorOf(std::string(test::kFourNodes) +
                      "kubernetes:\n  health_conditions: [GpuReady=maybe]\n"),
              HasSubstr("kubernetes.health_conditions: 'GpuReady=maybe' is not a condition"));
}

}  // namespace
}  // namespace lockstep::config
