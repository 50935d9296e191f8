// The audit log: private, appended, rotated, read back newest last.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "policy/audit_log.h"

namespace lockstep::policy {
namespace {

std::string TempDir() {
  std::string t = (std::filesystem::temp_directory_path() / "audit_XXXXXX").string();
  return ::mkdtemp(t.data());
}

TEST(AuditLog, OnlyItsOwnerReadsItAndLinesComeBackInOrder) {
  const std::string dir = TempDir();
  auto log = AuditLog::Open(dir + "/audit.log", 1 << 20, 3);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  for (int i = 0; i < 5; ++i) (*log)->Append("{\"n\":" + std::to_string(i) + "}");
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/audit.log").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::vector<std::string> tail = (*log)->Tail(2);
  ASSERT_EQ(tail.size(), 2u);
  EXPECT_EQ(tail[0], "{\"n\":3}");
  EXPECT_EQ(tail[1], "{\"n\":4}");
  std::filesystem::remove_all(dir);
}

TEST(AuditLog, RotatesPastItsSizeKeepingTheNewestFiles) {
  const std::string dir = TempDir();
  auto log = AuditLog::Open(dir + "/audit.log", 100, 2);
  ASSERT_TRUE(log.ok());
  const std::string line(40, 'x');  // 41 bytes with its newline: two a file
  for (int i = 0; i < 10; ++i) (*log)->Append(line.substr(0, 38) + std::to_string(i % 10) + "y");
  EXPECT_TRUE(std::filesystem::exists(dir + "/audit.log.1"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/audit.log.2"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/audit.log.3"));
  std::vector<std::string> tail = (*log)->Tail(100);
  ASSERT_EQ(tail.size(), 6u);  // three files of two lines
  EXPECT_EQ(tail.back().substr(38), "9y");
  EXPECT_EQ(tail.front().substr(38), "4y");
  std::filesystem::remove_all(dir);
}

TEST(AuditLog, ALinkInItsPlaceIsRefused) {
  const std::string dir = TempDir();
  ASSERT_EQ(::symlink("/etc/passwd", (dir + "/audit.log").c_str()), 0);
  auto log = AuditLog::Open(dir + "/audit.log", 1 << 20, 3);
  EXPECT_FALSE(log.ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lockstep::policy
