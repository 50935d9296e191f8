// The Prolog/Epilog runner (job_hook.h).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "backend/agent/job_hook.h"

namespace lockstep::agent {
namespace {

class JobHookTest : public ::testing::Test {
 protected:
  JobHookTest() {
    char tmpl[] = "/tmp/lockstep-job-hook-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  ~JobHookTest() override { std::filesystem::remove_all(dir_); }
  JobHookRun Script(const std::string& body, int timeout_s = 5) {
    const std::string path = dir_ + "/hook.sh";
    std::ofstream(path) << "#!/bin/sh\n" << body;
    ::chmod(path.c_str(), 0755);
    return {path, std::chrono::seconds(timeout_s), {{"SLURM_JOB_ID", "42"}, {"OUT", dir_}}};
  }
  std::string dir_;
};

TEST_F(JobHookTest, ItsEnvironmentIsTheJobsAlone) {
  ::setenv("LOCKSTEP_AGENT_ONLY", "leak", 1);
  JobHookOutcome o = RunJobHook(Script("env > $OUT/env\n"));
  ::unsetenv("LOCKSTEP_AGENT_ONLY");
  EXPECT_TRUE(o.ok) << o.detail;
  std::ifstream in(dir_ + "/env");
  std::string env((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(env.find("SLURM_JOB_ID=42"), std::string::npos) << env;
  EXPECT_EQ(env.find("LOCKSTEP_AGENT_ONLY"), std::string::npos) << env;
}

TEST_F(JobHookTest, AFailureSaysHowAndItsFirstLine) {
  JobHookOutcome o = RunJobHook(Script("echo no scratch on /local\necho more\nexit 7\n"));
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.detail, "exit 7: no scratch on /local");
  o = RunJobHook(Script("kill -KILL $$\n"));
  EXPECT_EQ(o.detail, "killed by signal 9");
  o = RunJobHook({dir_ + "/missing", std::chrono::seconds(5), {}});
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.detail.rfind("exit 127: cannot run: No such file", 0), 0u) << o.detail;
}

TEST_F(JobHookTest, ATimeoutKillsItsWholeGroup) {
  JobHookOutcome o = RunJobHook(Script("sleep 30 &\necho $! > $OUT/child\nwait\n", 1));
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.detail, "timed out after 1 s");
  std::ifstream in(dir_ + "/child");
  pid_t child = 0;
  in >> child;
  ASSERT_GT(child, 0);
  // Killed with its group (SIGKILL); a zombie until init reaps it, never running on.
  std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
  std::string pid, comm, state;
  stat >> pid >> comm >> state;
  EXPECT_TRUE(state.empty() || state == "Z" || state == "X") << state;
}

}  // namespace
}  // namespace lockstep::agent
