// Launcher: signals, Terminate, and the cleanup of what a task leaves behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <thread>

#include "backend/agent/launcher.h"
#include "backend/agent/launcher_test_util.h"

namespace lockstep::agent {
namespace {

using namespace std::chrono_literals;
using testing::BaseSpec;
using testing::ReadFile;
using testing::ReadPidFile;
using testing::SharedLauncher;
using testing::TempDir;
using testing::WaitForText;
using testing::WaitGone;

using Clock = std::chrono::steady_clock;

TEST(LauncherSignalTest, TaskKilledBySignalReportsTheSignal) {
  TempDir dir;
  auto pid = SharedLauncher().Spawn(BaseSpec(dir, {"/bin/sh", "-c", "kill -TERM $$"}));
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  auto e = SharedLauncher().Wait(*pid);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->signal, SIGTERM);
  EXPECT_EQ(e->exit_code, 0);
  EXPECT_FALSE(e->core_dumped);
}

TEST(LauncherSignalTest, SignalReachesTheTask) {
  TempDir dir;
  auto pid = SharedLauncher().Spawn(BaseSpec(dir, {"/bin/sleep", "30"}));
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  ASSERT_TRUE(SharedLauncher().Signal(*pid, SIGUSR1).ok());
  auto e = SharedLauncher().Wait(*pid);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->signal, SIGUSR1);
}

TEST(LauncherSignalTest, TaskStartsWithDefaultSignalsUnblocked) {
  // The agent may ignore SIGPIPE and block signals in its threads; tasks must not inherit that.
  TempDir dir;
  struct sigaction ign {
  }, old{};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ign, &old);
  sigset_t usr1, old_mask;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, &old_mask);
  auto pid = SharedLauncher().Spawn(
      BaseSpec(dir, {"/bin/grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status"}));
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  sigaction(SIGPIPE, &old, nullptr);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  ASSERT_TRUE(SharedLauncher().Wait(*pid).ok());
  EXPECT_EQ(ReadFile(dir.File("out")), "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

TEST(LauncherSignalTest, TerminateReturnsAsSoonAsTheTaskObeysSigterm) {
  TempDir dir;
  auto pid = SharedLauncher().Spawn(BaseSpec(dir, {"/bin/sleep", "30"}));
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  const auto start = Clock::now();
  ASSERT_TRUE(SharedLauncher().Terminate(*pid, 5s).ok());
  EXPECT_LT(Clock::now() - start, 2s);
  auto e = SharedLauncher().Wait(*pid);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->signal, SIGTERM);
}

TEST(LauncherSignalTest, TerminateKillsATaskThatIgnoresSigtermAfterTheGrace) {
  TempDir dir;
  auto pid = SharedLauncher().Spawn(
      BaseSpec(dir, {"/bin/sh", "-c", "trap '' TERM; echo ready; sleep 30; echo survived"}));
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  ASSERT_TRUE(WaitForText(dir.File("out"), "ready", 5s));
  const auto start = Clock::now();
  ASSERT_TRUE(SharedLauncher().Terminate(*pid, 300ms).ok());
  const auto took = Clock::now() - start;
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 3s);
  auto e = SharedLauncher().Wait(*pid);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->signal, SIGKILL);
  EXPECT_EQ(ReadFile(dir.File("out")), "ready\n");
}

TEST(LauncherSignalTest, BackgroundChildIsKilledWhenTheMainProcessExits) {
  TempDir dir;
  auto pid = SharedLauncher().Spawn(
      BaseSpec(dir, {"/bin/sh", "-c", "sleep 300 & echo $! > " + dir.File("pid") + "; exit 0"}));
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  const pid_t grandchild = ReadPidFile(dir.File("pid"), 5s);
  ASSERT_GT(grandchild, 0);
  auto e = SharedLauncher().Wait(*pid);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->exit_code, 0);
  const bool gone = WaitGone(grandchild, 2s);
  if (!gone) kill(grandchild, SIGKILL);  // the test started it: do not leave it behind
  EXPECT_TRUE(gone) << "background child " << grandchild << " outlived its task";
}

TEST(LauncherSignalTest, ReapAlsoKillsTheRestOfTheGroup) {
  TempDir dir;
  auto pid = SharedLauncher().Spawn(
      BaseSpec(dir, {"/bin/sh", "-c", "sleep 300 & echo $! > " + dir.File("pid") + "; exit 5"}));
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  const pid_t grandchild = ReadPidFile(dir.File("pid"), 5s);
  ASSERT_GT(grandchild, 0);
  int code = -1;
  const auto deadline = Clock::now() + 5s;
  while (code < 0 && Clock::now() < deadline) {
    for (const auto& [p, e] : SharedLauncher().Reap()) {
      if (p == *pid) code = e.exit_code;
    }
    std::this_thread::sleep_for(2ms);
  }
  EXPECT_EQ(code, 5);
  const bool gone = WaitGone(grandchild, 2s);
  if (!gone) kill(grandchild, SIGKILL);
  EXPECT_TRUE(gone) << "background child " << grandchild << " outlived its task";
}

TEST(LauncherSignalTest, TerminateReachesBackgroundChildren) {
  TempDir dir;
  auto pid = SharedLauncher().Spawn(
      BaseSpec(dir, {"/bin/sh", "-c", "sleep 300 & echo $! > " + dir.File("pid") + "; wait"}));
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  const pid_t grandchild = ReadPidFile(dir.File("pid"), 5s);
  ASSERT_GT(grandchild, 0);
  const auto start = Clock::now();
  ASSERT_TRUE(SharedLauncher().Terminate(*pid, 5s).ok());
  EXPECT_LT(Clock::now() - start, 2s);          // everything obeyed SIGTERM: no wait for the grace
  const bool gone = WaitGone(grandchild, 0ms);  // before Wait cleans up
  auto e = SharedLauncher().Wait(*pid);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->signal, SIGTERM);
  if (!gone) kill(grandchild, SIGKILL);
  EXPECT_TRUE(gone) << "SIGTERM did not reach the background child";
}

}  // namespace
}  // namespace lockstep::agent
