// The Prolog/Epilog runner (job_hook.h) and where a core is looked for (core_dump.h).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "backend/agent/core_dump.h"
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

TEST(CoreGlob, FollowsTheKernelsPattern) {
  CoreDumpContext c{42, "node1", 4711, 11, "/home/ada/run", 1000, 1000, "host-a"};
  EXPECT_EQ(CoreGlob({"core", false}, c), "/home/ada/run/core");
  EXPECT_EQ(CoreGlob({"core", true}, c), "/home/ada/run/core.4711");
  EXPECT_EQ(CoreGlob({"core.%p", true}, c), "/home/ada/run/core.4711");
  EXPECT_EQ(CoreGlob({"/var/crash/core.%e.%p.%u.%s.%h.%t", false}, c),
            "/var/crash/core.*.4711.1000.11.host-a.*");
  EXPECT_EQ(CoreGlob({"/cores/%%p-%g", false}, c), "/cores/%p-1000");
  EXPECT_EQ(CoreGlob({"|/usr/lib/systemd/systemd-coredump %P %u %g %s %t", false}, c), "");
  c.cwd = "/w[1]";
  EXPECT_EQ(CoreGlob({"core", false}, c), "/w\\[1]/core");
}

TEST(KeepCoreDump, SaysWhereAPipeSentIt) {
  CoreDumpContext c{42, "node1", 4711, 11, "/tmp", 0, 0, "h"};
  EXPECT_EQ(KeepCoreDump({"|/usr/share/apport/apport -p%p", false}, c),
            "core dumped, piped to /usr/share/apport/apport by kernel.core_pattern (not kept by "
            "lockstep; ask that handler, e.g. coredumpctl)");
}

TEST_F(JobHookTest, KeepCoreDumpMovesTheCoreIntoTheJobsDirectory) {
  std::ofstream(dir_ + "/core.4711") << std::string(1000, 'x');
  CoreDumpContext c{42, "node1", 4711, 11, dir_, ::getuid(), ::getgid(), "h"};
  const std::string evidence = KeepCoreDump({"core.%p", false}, c);
  const std::string kept = dir_ + "/cores-42/core.node1.4711";
  EXPECT_EQ(evidence, "core dumped: " + kept + " (1000 bytes)");
  EXPECT_TRUE(std::filesystem::exists(kept));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/core.4711"));
  EXPECT_EQ(KeepCoreDump({"core.%p", false}, c).rfind("core dumped, but no file matches", 0), 0u);
}

}  // namespace
}  // namespace lockstep::agent
