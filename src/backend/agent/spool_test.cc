// The agent's spool. Regression of issue 17: `scontrol requeue` of a running job failed in 2 of 6
// tries, because the cleanup of the old run removed the spooled script of the new one
// ("cannot run .../job526/script: No such file or directory"). The interleaving that lost the
// script is replayed here step by step, in the order the agent's command and reaper threads
// took them, and the new run's script is then run through the Launcher.
#include "backend/agent/spool.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "backend/agent/launcher_test_util.h"

namespace lockstep::agent {
namespace {

using testing::BaseSpec;
using testing::ReadFile;
using testing::SharedLauncher;
using testing::TempDir;

unsigned ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST(Spool, RegressionRequeueCleanupOfTheOldRunKeepsTheNewRunsScript) {
  TempDir dir;
  Result<Spool> spool = Spool::Open(dir.File("spool"));
  ASSERT_TRUE(spool.ok()) << spool.status().ToString();
  const SpoolRun old_run{526, 0, "node1"}, new_run{526, 1, "node1"};
  // 1. The job's first run starts.
  ASSERT_TRUE(spool->WriteScript(old_run, "#!/bin/sh\nsleep 300\n", ::getuid(), ::getgid()).ok());
  // 2. `scontrol requeue`: lockstepd sends terminate(run 0) and launch(run 1); the command
  //    thread launches run 1 before the reaper has seen run 0 end.
  Result<std::string> script =
      spool->WriteScript(new_run, "#!/bin/sh\necho new run of job $1\n", ::getuid(), ::getgid());
  ASSERT_TRUE(script.ok()) << script.status().ToString();
  // 3. The reaper sees run 0's processes gone and cleans up after it.
  spool->RemoveRun(old_run);
  // 4. Run 1's interpreter opens its script only now.
  TaskSpec spec = BaseSpec(dir, {*script, "526"});
  Result<pid_t> pid = SharedLauncher().Spawn(spec);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  Result<TaskExit> exit = SharedLauncher().Wait(*pid);
  ASSERT_TRUE(exit.ok()) << exit.status().ToString();
  EXPECT_EQ(exit->exit_code, 0);
  EXPECT_EQ(ReadFile(dir.File("out")), "new run of job 526\n");
  EXPECT_FALSE(std::filesystem::exists(spool->RunDir(old_run)));
}

TEST(Spool, RunsOnTwoNodesOfOneAgentHaveTheirOwnDirectories) {
  TempDir dir;
  Result<Spool> spool = Spool::Open(dir.File("spool"));
  ASSERT_TRUE(spool.ok());
  const SpoolRun a{7, 0, "node1"}, b{7, 0, "node2"};
  ASSERT_TRUE(spool->WriteScript(a, "#!/bin/sh\n", ::getuid(), ::getgid()).ok());
  ASSERT_TRUE(spool->WriteScript(b, "#!/bin/sh\n", ::getuid(), ::getgid()).ok());
  spool->RemoveRun(a);
  EXPECT_TRUE(std::filesystem::exists(spool->RunDir(b) + "/script"));
}

TEST(Spool, ScriptsArePrivateAndNodeNamesStayInsideTheSpool) {
  TempDir dir;
  Result<Spool> spool = Spool::Open(dir.File("spool"));
  ASSERT_TRUE(spool.ok());
  const SpoolRun run{9, 2, "../../etc"};
  Result<std::string> script = spool->WriteScript(run, "#!/bin/sh\n", ::getuid(), ::getgid());
  ASSERT_TRUE(script.ok()) << script.status().ToString();
  EXPECT_EQ(*script, dir.File("spool/job9.run2..._.._etc/script"));  // one name, no '/'
  EXPECT_EQ(ModeOf(*script), 0700u);
  EXPECT_EQ(ModeOf(spool->RunDir(run)), 0711u);
  EXPECT_EQ(ModeOf(dir.File("spool")), 0711u);
  // A directory left by an agent that died while launching this very run is replaced.
  testing::WriteFile(spool->RunDir(run) + "/stale", "x");
  ASSERT_TRUE(spool->WriteScript(run, "#!/bin/sh\necho again\n", ::getuid(), ::getgid()).ok());
  EXPECT_FALSE(std::filesystem::exists(spool->RunDir(run) + "/stale"));
  EXPECT_EQ(ReadFile(*script), "#!/bin/sh\necho again\n");
}

}  // namespace
}  // namespace lockstep::agent
