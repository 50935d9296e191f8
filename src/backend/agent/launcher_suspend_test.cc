// Launcher::Suspend: a task's processes stop (frozen cgroup, or SIGSTOP without one) and go on
// when resumed; Terminate of a suspended task ends it with SIGTERM, not by the grace's SIGKILL.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "backend/agent/launcher.h"
#include "backend/agent/launcher_test_util.h"
#include "common/wait_for.h"

namespace lockstep::agent {
namespace {

using namespace std::chrono_literals;
using testing::BaseSpec;
using testing::ReadFile;
using testing::ReadPidFile;
using testing::SharedLauncher;
using testing::TempDir;
using testing::UniqueCgroupName;

// The task's cgroup is frozen (cgroup.events says so once every process is).
bool Stopped(pid_t, const std::string& cgroup_dir) {
  return ReadFile(cgroup_dir + "/cgroup.events").find("frozen 1") != std::string::npos;
}

// With `use_cgroup` (where the host gives cgroups) the freezer; without, SIGSTOP/SIGCONT.
void SuspendAndResume(bool use_cgroup) {
  TempDir dir;
  Launcher& launcher = SharedLauncher();
  TaskSpec spec = BaseSpec(dir, {"/bin/sh", "-c",
                                 "echo $$ > pid; i=0; while :; do i=$((i+1)); echo $i > count; "
                                 "sleep 0.02; done"});
  std::string cgroup_dir;
  if (use_cgroup && launcher.cgroups_enabled()) {
    spec.cgroup_name = UniqueCgroupName("suspend");
    cgroup_dir = launcher.cgroup_root() + "/" + spec.cgroup_name;
  }
  auto pid = launcher.Spawn(spec);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  ASSERT_EQ(ReadPidFile(dir.path() + "/pid", 10s), *pid);
  ASSERT_TRUE(
      ::lockstep::testing::WaitFor([&] { return ReadFile(dir.path() + "/count") != ""; }, 10s));

  // Time passes: another task runs to its end.
  auto time_passes = [&] {
    auto other =
        launcher.Spawn(BaseSpec(dir, {"/bin/sh", "-c", "for i in 1 2 3 4 5; do sleep 0.05; done"}));
    ASSERT_TRUE(other.ok());
    ASSERT_TRUE(launcher.Wait(*other).ok());
  };
  ASSERT_TRUE(launcher.Suspend(*pid, true).ok());
  if (!cgroup_dir.empty())  // the freezer says when it is done
    ASSERT_TRUE(::lockstep::testing::WaitFor([&] { return Stopped(*pid, cgroup_dir); }, 10s));
  else
    time_passes();  // a stop signal takes effect at once, well within that
  const std::string at_suspend = ReadFile(dir.path() + "/count");
  time_passes();
  EXPECT_EQ(ReadFile(dir.path() + "/count"), at_suspend) << "the task ran on while suspended";

  ASSERT_TRUE(launcher.Suspend(*pid, false).ok());
  EXPECT_TRUE(::lockstep::testing::WaitFor(
      [&] { return ReadFile(dir.path() + "/count") != at_suspend; }, 10s));

  // Suspended again, then terminated: thawed first, so SIGTERM ends it well before the grace.
  ASSERT_TRUE(launcher.Suspend(*pid, true).ok());
  if (!cgroup_dir.empty())
    ASSERT_TRUE(::lockstep::testing::WaitFor([&] { return Stopped(*pid, cgroup_dir); }, 10s));
  ASSERT_TRUE(launcher.Terminate(*pid, 30s).ok());
  auto e = launcher.Wait(*pid);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->signal, SIGTERM);
  EXPECT_EQ(launcher.Suspend(*pid, true).code(), StatusCode::kNotFound);
}

TEST(LauncherSuspendTest, TheFreezerStopsATaskInACgroupAndThawsIt) {
  if (!SharedLauncher().cgroups_enabled()) GTEST_SKIP() << SharedLauncher().cgroup_note();
  SuspendAndResume(true);
}

TEST(LauncherSuspendTest, SigstopStopsATaskWithoutACgroupAndSigcontResumesIt) {
  SuspendAndResume(false);
}

}  // namespace
}  // namespace lockstep::agent
