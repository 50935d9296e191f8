// The `identity:` and `login:` sections of the cluster YAML (docs/login.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/cluster_config_test_util.h"

namespace lockstep::config {
namespace {

using test::ErrorOf;
using test::Parse;
using test::WithNodes;
using ::testing::HasSubstr;

TEST(IdentityConfig, TheHostsUsersByDefaultAFileWhenNamed) {
  Result<ClusterConfig> c = Parse(WithNodes(""));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->identity.source, IdentityConfig::Source::kNss);
  EXPECT_FALSE(c->identity.cancel_jobs_of_removed);

  c = Parse(WithNodes("identity:\n  users_file: /etc/lockstep/users.yaml\n  removed_users_jobs: cancel\n"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->identity.source, IdentityConfig::Source::kYaml);
  EXPECT_TRUE(c->identity.cancel_jobs_of_removed);

  c = Parse(WithNodes("identity:\n  passwd_file: /srv/passwd\n  group_file: /srv/group\n"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->identity.source, IdentityConfig::Source::kFiles);
}

TEST(IdentityConfig, ErrorsNameTheKey) {
  EXPECT_THAT(ErrorOf(WithNodes("identity:\n  users_file: users.yaml\n")),
              HasSubstr("identity.users_file: must be an absolute path"));
  EXPECT_THAT(ErrorOf(WithNodes("identity:\n  passwd_file: /srv/passwd\n")),
              HasSubstr("identity.passwd_file: passwd_file and group_file go together"));
  EXPECT_THAT(ErrorOf(WithNodes("identity:\n  users_file: /a\n  passwd_file: /b\n  group_file: /c\n")),
              HasSubstr("not both"));
  EXPECT_THAT(ErrorOf(WithNodes("identity:\n  removed_users_jobs: delete\n")),
              HasSubstr("'delete' is not one of keep|cancel"));
}

TEST(LoginConfig, DefaultsAndEverySetting) {
  Result<ClusterConfig> c = Parse(WithNodes(""));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->login.idle_timeout, 3600);
  EXPECT_TRUE(c->login.storage_all);
  c = Parse(WithNodes(R"(storage:
  - {name: shared, host_path: /srv/shared}
login:
  image: registry.local/login:1
  cpus: 2
  memory: 4G
  node_selector: {node-role: login}
  idle_timeout: "2:00:00"
  storage: [shared]
  home: false
  server: https://lockstepd.lockstep.svc:6820
  ca_cert: /etc/lockstep/ca.crt
  host_network: true
  ssh: true
  hosts: "login[1-2]"
  alias: slogin
  pools:
    - {name: vision, groups: [vision, ml], cpus: 4, memory: 16G}
)"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const LoginConfig& l = c->login;
  EXPECT_EQ(l.image, "registry.local/login:1");
  EXPECT_EQ(l.cpu_millis, 2000);
  EXPECT_EQ(l.memory_mb, 4096);
  EXPECT_EQ(l.node_selector.at("node-role"), "login");
  EXPECT_EQ(l.idle_timeout, 7200);
  EXPECT_FALSE(l.storage_all);
  EXPECT_EQ(l.storage, std::vector<std::string>{"shared"});
  EXPECT_FALSE(l.home);
  EXPECT_TRUE(l.host_network);
  EXPECT_TRUE(l.ssh);
  EXPECT_EQ(l.hosts, (std::vector<std::string>{"login1", "login2"}));
  EXPECT_EQ(l.alias, "slogin");
  ASSERT_EQ(l.pools.size(), 1u);
  EXPECT_EQ(l.pools[0].name, "vision");
  EXPECT_EQ(l.pools[0].groups, (std::vector<std::string>{"vision", "ml"}));
  EXPECT_EQ(l.pools[0].cpu_millis, 4000);
  EXPECT_EQ(l.pools[0].memory_mb, 16384);
}

TEST(LoginConfig, ErrorsNameTheKey) {
  EXPECT_THAT(ErrorOf(WithNodes("login:\n  storage: [nowhere]\n")),
              HasSubstr("login.storage: 'nowhere' is not a declared file system"));
  EXPECT_THAT(ErrorOf(WithNodes("login:\n  server: http://x:1\n")),
              HasSubstr("login.server: must be an https:// URL"));
  EXPECT_THAT(ErrorOf(WithNodes("login:\n  cpus: -1\n")), HasSubstr("login.cpus: '-1' is not a CPU count"));
  EXPECT_THAT(ErrorOf(WithNodes("login:\n  cpus: 0\n")), HasSubstr("login.cpus"));
  EXPECT_THAT(ErrorOf(WithNodes("login:\n  cpus: 1.2.3\n")), HasSubstr("login.cpus"));
  EXPECT_THAT(ErrorOf(WithNodes("login:\n  cpus: 99999999999m\n")), HasSubstr("login.cpus"));
  for (auto [text, millis] : {std::pair{"0.25", 250}, std::pair{"100m", 100}, std::pair{"3", 3000}}) {
    Result<ClusterConfig> c = Parse(WithNodes(std::string("login:\n  cpus: ") + text + "\n"));
    ASSERT_TRUE(c.ok()) << text;
    EXPECT_EQ(c->login.cpu_millis, millis) << text;
  }
  EXPECT_THAT(ErrorOf(WithNodes("login:\n  memory: 1M\n")), HasSubstr("login.memory: must be at least 64M"));
  EXPECT_THAT(ErrorOf(WithNodes("login:\n  alias: 'rm -rf'\n")), HasSubstr("login.alias"));
  EXPECT_THAT(ErrorOf(WithNodes("login:\n  node_selector: [a]\n")), HasSubstr("login.node_selector"));
  EXPECT_THAT(ErrorOf(WithNodes("login:\n  idle_timeout: 0\n")), HasSubstr("login.idle_timeout"));
  EXPECT_THAT(ErrorOf(WithNodes("login:\n  colour: red\n")), HasSubstr("colour"));
  EXPECT_THAT(ErrorOf(WithNodes("login:\n  pools:\n    - {name: Vision, groups: [v]}\n")),
              HasSubstr("login.pools[0].name: 'Vision' is not a pool name"));
  EXPECT_THAT(ErrorOf(WithNodes("login:\n  pools:\n    - {name: v}\n")),
              HasSubstr("login.pools[0].groups: name the groups"));
  EXPECT_THAT(ErrorOf(WithNodes("login:\n  pools:\n    - {name: v, groups: [a]}\n    - {name: v, groups: [b]}\n")),
              HasSubstr("login.pools[1].name: pool v again"));
}

}  // namespace
}  // namespace lockstep::config
