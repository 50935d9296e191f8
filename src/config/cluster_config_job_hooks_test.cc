// The cluster YAML's `prolog:` and `epilog:`, and `health.core_dumps` (docs/health.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/cluster_config_test_util.h"

namespace lockstep::config {
namespace {

using test::ErrorOf;
using test::Parse;
using ::testing::HasSubstr;

TEST(JobHooksConfig, NoneByDefault) {
  Result<ClusterConfig> c = Parse(test::kFourNodes);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->job_hooks.prolog.configured());
  EXPECT_FALSE(c->job_hooks.epilog.configured());
  EXPECT_EQ(c->health.core_max_mb, 1024);
}

TEST(JobHooksConfig, APathOrAMapWithATimeout) {
  Result<ClusterConfig> c = Parse(std::string(test::kFourNodes) + R"(
prolog: /etc/lockstep/prolog.sh
epilog:
  program: /etc/lockstep/epilog.sh
  timeout: 2:00
health:
  core_dumps: {max_size: 64M}
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->job_hooks.prolog.program, "/etc/lockstep/prolog.sh");
  EXPECT_EQ(c->job_hooks.prolog.timeout, 300);
  EXPECT_EQ(c->job_hooks.epilog.program, "/etc/lockstep/epilog.sh");
  EXPECT_EQ(c->job_hooks.epilog.timeout, 120);
  EXPECT_EQ(c->health.core_max_mb, 64);
}

TEST(JobHooksConfig, ErrorsNameTheKeyAndLine) {
  EXPECT_THAT(ErrorOf(std::string(test::kFourNodes) + "prolog: prolog.sh\n"),
              HasSubstr("cluster.yaml:5: prolog: must be an absolute path"));
  EXPECT_THAT(ErrorOf(std::string(test::kFourNodes) + "epilog:\n  timeout: 5\n"),
              HasSubstr("epilog.program: required"));
  EXPECT_THAT(ErrorOf(std::string(test::kFourNodes) +
                      "epilog:\n  program: /bin/true\n  timeout: 0\n"),
              HasSubstr("cluster.yaml:7: epilog.timeout: must be from 1 s to 1 day"));
  EXPECT_THAT(ErrorOf(std::string(test::kFourNodes) + "prolog:\n  program: /x\n  when: now\n"),
              HasSubstr("prolog.when"));
  EXPECT_THAT(ErrorOf(std::string(test::kFourNodes) + "health:\n  core_dumps: {max_size: big}\n"),
              HasSubstr("health.core_dumps.max_size: 'big' is not a memory size"));
}

}  // namespace
}  // namespace lockstep::config
