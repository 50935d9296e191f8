#include "identity/user_directory.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace lockstep::identity {
namespace {

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

constexpr char kPasswd[] =
    "# comment\n"
    "alice:x:2001:2001:Alice A:/home/alice:/bin/bash\n"
    "bob:x:2002:2002::/home/bob:\n";
constexpr char kGroup[] = "alice:x:2001:\nbob:x:2002:\nresearch:x:3000:alice,bob\nops:x:3001:bob\n";

TEST(PasswdAndGroup, ReadsUsersAndTheirSupplementaryGroups) {
  auto dir = ParsePasswdAndGroup(kPasswd, "passwd", kGroup, "group");
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  std::optional<UserRecord> alice = (*dir)->UserByName("alice");
  ASSERT_TRUE(alice);
  EXPECT_EQ(alice->uid, 2001u);
  EXPECT_EQ(alice->home, "/home/alice");
  EXPECT_EQ(alice->shell, "/bin/bash");
  EXPECT_EQ(alice->groups, (std::vector<std::uint32_t>{3000}));
  std::optional<UserRecord> bob = (*dir)->UserByUid(2002);
  ASSERT_TRUE(bob);
  EXPECT_EQ(bob->shell, "/bin/sh");
  EXPECT_EQ(bob->groups, (std::vector<std::uint32_t>{3000, 3001}));
  EXPECT_FALSE((*dir)->UserByUid(2003));
  EXPECT_EQ((*dir)->GroupByGid(3000)->name, "research");
  EXPECT_EQ(PasswdLine(*alice), "alice:x:2001:2001:Alice A:/home/alice:/bin/bash");
  EXPECT_EQ(GroupLine(*(*dir)->GroupByGid(3000)), "research:x:3000:alice,bob");
}

TEST(PasswdAndGroup, BadLinesAreNamedByFileAndLine) {
  auto bad = [](const char* passwd, const char* group) {
    auto d = ParsePasswdAndGroup(passwd, "p", group, "g");
    return d.ok() ? std::string("accepted") : d.status().message();
  };
  EXPECT_EQ(bad("alice:x:2001\n", ""), "p:1: expected name:x:uid:gid:gecos:home:shell");
  EXPECT_EQ(bad("alice:x:-1:1::/h:/bin/sh\n", ""), "p:1: uid '-1' is not an id");
  EXPECT_EQ(bad("alice:x:4294967295:1::/h:/bin/sh\n", ""), "p:1: uid '4294967295' is not an id");
  EXPECT_EQ(bad("Alice:x:1:1::/h:/bin/sh\n", ""), "p:1: 'Alice' is not a user name ([a-z_][a-z0-9_.-]*)");
  EXPECT_EQ(bad("a:x:1:1::/h:/s\nb:x:1:1::/h:/s\n", ""), "p:2: uid 1 again (b)");
  EXPECT_EQ(bad("a:x:1:1::/h:/s\n", "g:x:5:a,zed\n"), "g:1: member 'zed' is not a user of p");
}

TEST(UsersYaml, ReadsUsersGroupsKeysAndAccounts) {
  constexpr char kYaml[] = R"(
groups:
  - {name: research, gid: 3000}
users:
  - name: alice
    uid: 2001
    groups: [research]
    home: /data/home/alice
    ssh_keys: ["ssh-ed25519 AAAAC3 alice@laptop"]
    default_account: physics
  - {name: bob, uid: 2002, gid: 3000, groups: ["3000"]}
)";
  auto dir = ParseUsersYaml(kYaml, "users.yaml");
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  UserRecord alice = *(*dir)->UserByName("alice");
  EXPECT_EQ(alice.gid, 2001u);  // its own group, made for it
  EXPECT_EQ(alice.groups, (std::vector<std::uint32_t>{3000}));
  EXPECT_EQ(alice.ssh_keys.size(), 1u);
  EXPECT_EQ(alice.default_account, "physics");
  EXPECT_EQ((*dir)->GroupByGid(2001)->name, "alice");
  UserRecord bob = *(*dir)->UserByName("bob");
  EXPECT_TRUE(bob.groups.empty());  // 3000 is its primary group
  EXPECT_EQ(bob.home, "/home/bob");
  EXPECT_EQ((*dir)->GroupByGid(3000)->members, (std::vector<std::string>{"alice"}));
}

TEST(UsersYaml, ErrorsNameTheFileLineAndKey) {
  auto bad = [](const char* yaml) {
    auto d = ParseUsersYaml(yaml, "users.yaml");
    return d.ok() ? std::string("accepted") : d.status().message();
  };
  EXPECT_EQ(bad("users:\n  - {name: alice}\n"), "users.yaml:2: users[0].uid: is required");
  EXPECT_TRUE(bad("users:\n  - {name: alice, uid: -5}\n").rfind("users.yaml:2: users[0].uid: ", 0) == 0)
      << bad("users:\n  - {name: alice, uid: -5}\n");
  EXPECT_NE(bad("users:\n  - {name: alice, uid: 99999999999}\n"), "accepted");
  EXPECT_EQ(bad("users:\n  - {name: alice, uid: 1, groups: [nope]}\n"),
            "users.yaml:2: users[0].groups: 'nope' is not a group of the file (groups:)");
  EXPECT_EQ(bad("users:\n  - {name: alice, uid: 1, home: relative}\n"),
            "users.yaml:2: users[0].home: must be an absolute path without ':' or control characters");
  EXPECT_EQ(bad("users:\n  - {name: alice, uid: 1}\n  - {name: alice, uid: 2}\n"),
            "users.yaml:3: users[1].name: user alice again");
  EXPECT_TRUE(Contains(bad("users:\n  - {name: a, uid: 1, colour: red}\n"), "colour"))
      << bad("users:\n  - {name: a, uid: 1, colour: red}\n");
  EXPECT_EQ(bad("groups: []\n"), "users.yaml:1: users: is required (a list of users)");
}

TEST(HostDirectory, KnowsRootAndTheCallingUser) {
  auto host = HostDirectory();
  std::optional<UserRecord> me = host->UserByUid(::getuid());
  ASSERT_TRUE(me);
  EXPECT_EQ(host->UserByName(me->name)->uid, ::getuid());
  EXPECT_EQ(host->UserByUid(0)->name, "root");
  EXPECT_FALSE(host->UserByName("no-such-user-of-lockstep"));
  bool listed = false;
  for (const UserRecord& u : host->Users()) listed = listed || u.uid == 0;
  EXPECT_TRUE(listed);
}

}  // namespace
}  // namespace lockstep::identity
