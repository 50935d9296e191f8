#include "identity/identity_source.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace lockstep::identity {
namespace {

class IdentitySourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/lockstep-identity-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    config_.source = config::IdentityConfig::Source::kYaml;
    config_.users_file = dir_ + "/users.yaml";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& text) { std::ofstream(config_.users_file) << text; }

  std::string dir_;
  config::IdentityConfig config_;
};

TEST_F(IdentitySourceTest, ReloadSaysWhoWasRemovedAndKeepsTheLastGoodFile) {
  Write("users:\n  - {name: alice, uid: 2001}\n  - {name: bob, uid: 2002}\n");
  auto source = IdentitySource::Open(config_);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_TRUE((*source)->Current()->UserByName("alice"));

  Result<DirectoryChange> same = (*source)->Reload();
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(same->removed.empty());

  Write("users:\n  - {name: bob, uid: 2002, shell: /bin/bash}\n  - {name: carol, uid: 2003}\n");
  Result<DirectoryChange> change = (*source)->Reload();
  ASSERT_TRUE(change.ok()) << change.status().ToString();
  ASSERT_EQ(change->removed.size(), 1u);
  EXPECT_EQ(change->removed[0].name, "alice");
  ASSERT_EQ(change->changed.size(), 1u);
  EXPECT_EQ(change->changed[0].shell, "/bin/bash");
  ASSERT_EQ(change->added.size(), 1u);
  EXPECT_EQ(change->added[0].name, "carol");
  EXPECT_FALSE((*source)->Current()->UserByName("alice"));

  // A broken file: an error naming it, and the directory as it was.
  Write("users:\n  - {name: bob}\n");
  Result<DirectoryChange> broken = (*source)->Reload();
  EXPECT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("users.yaml:2: users[0].uid"), std::string::npos)
      << broken.status().message();
  EXPECT_TRUE((*source)->Current()->UserByName("bob"));
}

TEST_F(IdentitySourceTest, OpenRefusesAMissingOrBadFile) {
  auto missing = IdentitySource::Open(config_);
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(config_.users_file), std::string::npos);
  Write("users: 5\n");
  EXPECT_FALSE(IdentitySource::Open(config_).ok());
}

TEST_F(IdentitySourceTest, WatchReportsARemovalWithoutBeingAsked) {
  Write("users:\n  - {name: alice, uid: 2001}\n");
  config_.reload_period = 1;
  auto source = IdentitySource::Open(config_);
  ASSERT_TRUE(source.ok());
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> removed;
  (*source)->Watch([&](const DirectoryChange& c) {
    std::lock_guard<std::mutex> lock(mu);
    for (const UserRecord& u : c.removed) removed.push_back(u.name);
    cv.notify_all();
  });
  Write("users:\n  - {name: carol, uid: 2003}\n");
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return !removed.empty(); }));
  EXPECT_EQ(removed, (std::vector<std::string>{"alice"}));
}

}  // namespace
}  // namespace lockstep::identity
