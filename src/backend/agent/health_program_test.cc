// The site's health program (Nagios exit codes, first line the reason, timeout = unknown) and
// the settings lockstepd sends the agents.
#include "backend/agent/health_program.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "backend/agent/health_monitor.h"
#include "common/wait_for.h"

namespace lockstep::agent {
namespace {

class HealthProgramTest : public ::testing::Test {
 protected:
  HealthProgramTest() {
    char tmpl[] = "/tmp/health-program-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  ~HealthProgramTest() override { std::filesystem::remove_all(dir_); }
  std::string Program(const std::string& body) {
    const std::string path = dir_ + "/check" + std::to_string(++programs_) + ".sh";
    std::ofstream(path) << "#!/bin/sh\n" << body;
    ::chmod(path.c_str(), 0755);
    return path;
  }
  std::string dir_;
  int programs_ = 0;
};

TEST_F(HealthProgramTest, ExitCodesAndTheFirstLine) {
  backend::HealthFinding ok = RunHealthProgram(Program("echo all good\nexit 0\n"), "n1",
                                               std::chrono::seconds(10));
  EXPECT_EQ(ok.check, "program");
  EXPECT_EQ(ok.value, 0);
  EXPECT_EQ(ok.detail, "all good");
  backend::HealthFinding critical = RunHealthProgram(
      Program("echo \"ERROR: $SLURMD_NODENAME: /scratch 100% full\"\necho more\nexit 2\n"), "n7",
      std::chrono::seconds(10));
  EXPECT_EQ(critical.value, 2);
  EXPECT_EQ(critical.detail, "ERROR: n7: /scratch 100% full");
  EXPECT_EQ(RunHealthProgram(Program("exit 1\n"), "n1", std::chrono::seconds(10)).value, 1);
  EXPECT_EQ(RunHealthProgram(Program("exit 9\n"), "n1", std::chrono::seconds(10)).value, 3)
      << "a code outside Nagios' reads as unknown";
}

TEST_F(HealthProgramTest, ATimeoutIsUnknownAndEndsTheProgramsChildrenToo) {
  const std::string pid_file = dir_ + "/pid";
  backend::HealthFinding f = RunHealthProgram(
      Program("echo $$ > " + pid_file + "\n(sleep 30) &\nsleep 30\n"), "n1",
      std::chrono::seconds(1));
  EXPECT_EQ(f.value, 3);
  EXPECT_EQ(f.detail, "health program timed out after 1 s");
  pid_t group = 0;
  std::ifstream(pid_file) >> group;
  ASSERT_GT(group, 0);
  // Its process group is gone, the background sleep with it (once init has reaped them).
  EXPECT_TRUE(testing::WaitFor([&] { return ::kill(-group, 0) != 0; }, std::chrono::seconds(10)));
}

TEST_F(HealthProgramTest, AProgramThatCannotRunIsUnknown) {
  backend::HealthFinding f =
      RunHealthProgram(dir_ + "/missing", "n1", std::chrono::seconds(10));
  EXPECT_EQ(f.value, 3);
  EXPECT_NE(f.detail.find("cannot run"), std::string::npos) << f.detail;
}

TEST(HealthSettings, FromLockstepdsCommand) {
  Result<HealthSettings> s = DecodeHealthSettings(
      {{"type", "health"}, {"program", "/x"}, {"interval_s", 5}, {"timeout_s", 2},
       {"node_states", {"IDLE", "CYCLE"}}, {"configured_gpus", {{"n1", 8}}}});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->program, "/x");
  EXPECT_EQ(s->interval.count(), 5);
  EXPECT_TRUE(s->run_idle);
  EXPECT_FALSE(s->run_busy);
  EXPECT_TRUE(s->cycle);
  EXPECT_EQ(s->configured_gpus.at("n1"), 8);
  EXPECT_FALSE(DecodeHealthSettings({{"interval_s", 0}}).ok());
  EXPECT_FALSE(DecodeHealthSettings({{"node_states", {"BUSY"}}}).ok());
  EXPECT_FALSE(DecodeHealthSettings({{"program", 7}}).ok());
}

}  // namespace
}  // namespace lockstep::agent
