#include "common/log.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace lockstep::log {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Log, ParsesSlurmLikeLevelNames) {
  EXPECT_EQ(*ParseLevel("trace"), Level::kTrace);
  EXPECT_EQ(*ParseLevel("debug"), Level::kDebug);
  EXPECT_EQ(*ParseLevel("info"), Level::kInfo);
  EXPECT_EQ(*ParseLevel("warning"), Level::kWarning);
  EXPECT_EQ(*ParseLevel("warn"), Level::kWarning);
  EXPECT_EQ(*ParseLevel("error"), Level::kError);
  EXPECT_EQ(*ParseLevel("off"), Level::kOff);
  Result<Level> bad = ParseLevel("loud");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "--log-level: 'loud' is not a level (trace, debug, info, warning, error, off)");
  EXPECT_EQ(LevelName(Level::kWarning), "warning");
}

TEST(Log, WritesLinesAtOrAboveTheLevelToTheFileAtOnce) {
  std::string dir = (std::filesystem::path(::testing::TempDir()) / "log_test.XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const std::string file = dir + "/agent.log";
  ASSERT_TRUE(Init({"lockstep-agent", Level::kInfo, file}).ok());
  Debug("dropped {}", 1);
  Info("job {} started on {}", 42, "node1");
  Warning("cgroups off: {}", "no cgroup v2");
  EXPECT_FALSE(Enabled(Level::kDebug));
  EXPECT_TRUE(Enabled(Level::kError));
  // Flushed as written: readable before the logger goes.
  const std::string text = Slurp(file);
  EXPECT_EQ(text.find("dropped"), std::string::npos) << text;
  EXPECT_NE(text.find(" info lockstep-agent: job 42 started on node1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find(" warning lockstep-agent: cgroups off: no cgroup v2\n"), std::string::npos)
      << text;
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  ASSERT_TRUE(Init({"lockstep-agent", Level::kInfo, ""}).ok());  // back to stderr
  std::filesystem::remove_all(dir);
}

TEST(Log, APrivateFileIsCreatedWithItsModeAndAnExistingOneIsTightened) {
  std::string dir = (std::filesystem::path(::testing::TempDir()) / "log_test.XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const std::string created = dir + "/lockstepd.log", existing = dir + "/old.log";
  Options o{"lockstepd", Level::kWarning, created, 0600, /*also_stderr=*/true};
  ASSERT_TRUE(Init(o).ok());
  Info("dropped");
  Warning("node {} down", "n1");
  struct stat st {};
  ASSERT_EQ(::stat(created.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string text = Slurp(created);
  EXPECT_EQ(text.find("dropped"), std::string::npos) << text;
  EXPECT_NE(text.find(" warning lockstepd: node n1 down\n"), std::string::npos) << text;
  std::ofstream(existing) << "before\n";
  ::chmod(existing.c_str(), 0644);
  o.file = existing;
  ASSERT_TRUE(Init(o).ok());
  ASSERT_EQ(::stat(existing.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_TRUE(Init({"lockstep-agent", Level::kInfo, ""}).ok());  // back to stderr
  std::filesystem::remove_all(dir);
}

TEST(Log, AFileThatCannotBeOpenedIsAnErrorNamingIt) {
  Status st = Init({"lockstep-agent", Level::kInfo, "/nonexistent/dir/agent.log"});
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_NE(st.message().find("--log-file: cannot open '/nonexistent/dir/agent.log'"),
            std::string::npos)
      << st.message();
}

}  // namespace
}  // namespace lockstep::log
