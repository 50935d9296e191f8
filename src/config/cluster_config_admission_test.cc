// The `admission:` section of the cluster YAML (docs/policy.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/cluster_config_test_util.h"

namespace lockstep::config {
namespace {

using test::ErrorOf;
using test::Parse;
using test::WithNodes;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(AdmissionConfig, NothingByDefaultEveryKeyWhenGiven) {
  Result<ClusterConfig> c = Parse(WithNodes(""));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->admission.policy_file.empty());
  EXPECT_TRUE(c->admission.webhook.listen.empty());
  EXPECT_TRUE(c->admission.kubernetes_defaults);

  c = Parse(WithNodes(
      "admission:\n  policy_file: /etc/lockstep/policy.yaml\n  audit_log: /var/log/audit.log\n"
      "  audit_max_mb: 8\n  audit_keep: 3\n  kubernetes_defaults: false\n"
      "  webhook:\n    listen: 127.0.0.1:9443\n    tls_cert: /c.pem\n    tls_key: /k.pem\n"
      "    trusted_users: [admin, system:serviceaccount:x:y]\n"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const AdmissionConfig& a = c->admission;
  EXPECT_EQ(a.policy_file, "/etc/lockstep/policy.yaml");
  EXPECT_EQ(a.audit_log, "/var/log/audit.log");
  EXPECT_EQ(a.audit_max_mb, 8);
  EXPECT_EQ(a.audit_keep, 3);
  EXPECT_FALSE(a.kubernetes_defaults);
  EXPECT_EQ(a.webhook.listen, "127.0.0.1:9443");
  EXPECT_THAT(a.webhook.trusted_users, ElementsAre("admin", "system:serviceaccount:x:y"));
}

TEST(AdmissionConfig, ErrorsNameTheKey) {
  EXPECT_THAT(ErrorOf(WithNodes("admission:\n  policy_file: policy.yaml\n")),
              HasSubstr("admission.policy_file: must be an absolute path"));
  EXPECT_THAT(ErrorOf(WithNodes("admission:\n  audit_keep: 0\n")), HasSubstr("admission.audit_keep"));
  EXPECT_THAT(ErrorOf(WithNodes("admission:\n  webhook:\n    listen: 9443\n    tls_cert: /c\n    tls_key: /k\n")),
              HasSubstr("admission.webhook.listen: '9443' is not HOST:PORT"));
  EXPECT_THAT(ErrorOf(WithNodes("admission:\n  webhook:\n    listen: :9443\n")),
              HasSubstr("admission.webhook.tls_cert"));
  EXPECT_THAT(ErrorOf(WithNodes("admission:\n  polcy_file: /p\n")), HasSubstr("polcy_file"));
}

}  // namespace
}  // namespace lockstep::config
