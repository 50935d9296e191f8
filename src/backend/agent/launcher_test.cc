// Launcher: running a task with its files, environment, directory and user; errors before exec;
// reaping. Signals and cleanup are in launcher_signal_test.cc, cgroups in cgroup_test.cc.
#include "backend/agent/launcher.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "backend/agent/launcher_test_util.h"

namespace lockstep::agent {
namespace {

using namespace std::chrono_literals;
using testing::BaseSpec;
using testing::ReadFile;
using testing::SharedLauncher;
using testing::TempDir;
using testing::WriteFile;

TaskExit RunToEnd(const TaskSpec& spec) {
  Launcher& l = SharedLauncher();
  auto pid = l.Spawn(spec);
  EXPECT_TRUE(pid.ok()) << pid.status().ToString();
  if (!pid.ok()) return {};
  auto exit = l.Wait(*pid);
  EXPECT_TRUE(exit.ok()) << exit.status().ToString();
  return exit.ok() ? *exit : TaskExit{};
}

TEST(LauncherTest, ReportsExitCodeAndWritesStdoutAndStderrToOneFile) {
  TempDir dir;
  const TaskExit e = RunToEnd(BaseSpec(dir, {"/bin/sh", "-c", "echo hi; echo err >&2; exit 3"}));
  EXPECT_EQ(e.exit_code, 3);
  EXPECT_EQ(e.signal, 0);
  EXPECT_FALSE(e.oom_killed);
  EXPECT_EQ(ReadFile(dir.File("out")), "hi\nerr\n");
}

// inherit_fd (the PMI-2 server's socket for PMI_FD): the task has it under its own number;
// another close-on-exec descriptor of the agent it does not have.
TEST(LauncherTest, TheTaskInheritsOnlyTheDescriptorItIsGiven) {
  TempDir dir;
  int given[2], other[2];
  ASSERT_EQ(::pipe2(given, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(other, O_CLOEXEC), 0);
  TaskSpec spec = BaseSpec(dir, {"/bin/sh", "-c",
                                 "echo through >&" + std::to_string(given[1]) +
                                     " && echo ok; echo leaked 2>/dev/null >&" + std::to_string(other[1]) +
                                     " || echo closed"});
  spec.inherit_fd = given[1];
  EXPECT_EQ(RunToEnd(spec).exit_code, 0);
  ::close(given[1]);
  ::close(other[1]);
  char buf[64] = {};
  EXPECT_EQ(::read(given[0], buf, sizeof buf - 1), 8);
  EXPECT_STREQ(buf, "through\n");
  EXPECT_EQ(::read(other[0], buf, sizeof buf - 1), 0) << "nothing came through the other";
  ::close(given[0]);
  ::close(other[0]);
  EXPECT_EQ(ReadFile(dir.File("out")), "ok\nclosed\n");
}

TEST(LauncherTest, WritesStderrToItsOwnFile) {
  TempDir dir;
  TaskSpec spec = BaseSpec(dir, {"/bin/sh", "-c", "echo hi; echo err >&2"});
  spec.stderr_path = dir.File("err");
  EXPECT_EQ(RunToEnd(spec).exit_code, 0);
  EXPECT_EQ(ReadFile(dir.File("out")), "hi\n");
  EXPECT_EQ(ReadFile(dir.File("err")), "err\n");
}

TEST(LauncherTest, AppendsWhenAskedAndTruncatesOtherwise) {
  TempDir dir;
  WriteFile(dir.File("out"), "old\n");
  TaskSpec spec = BaseSpec(dir, {"/bin/echo", "new"});
  spec.append = true;
  RunToEnd(spec);
  EXPECT_EQ(ReadFile(dir.File("out")), "old\nnew\n");
  spec.append = false;
  RunToEnd(spec);
  EXPECT_EQ(ReadFile(dir.File("out")), "new\n");
}

TEST(LauncherTest, ReadsStdinFromTheGivenFile) {
  TempDir dir;
  WriteFile(dir.File("in"), "from stdin\n");
  TaskSpec spec = BaseSpec(dir, {"/bin/cat"});
  spec.stdin_path = dir.File("in");
  RunToEnd(spec);
  EXPECT_EQ(ReadFile(dir.File("out")), "from stdin\n");
}

TEST(LauncherTest, EnvironmentIsExactlyTheGivenOne) {
  TempDir dir;
  setenv("LOCKSTEP_LAUNCHER_TEST_LEAK", "1", 1);  // must not reach the task
  TaskSpec spec = BaseSpec(dir, {"/usr/bin/env"});
  spec.env = {{"A", "1"}, {"B", "two words"}};
  RunToEnd(spec);
  unsetenv("LOCKSTEP_LAUNCHER_TEST_LEAK");
  EXPECT_EQ(ReadFile(dir.File("out")), "A=1\nB=two words\n");
}

TEST(LauncherTest, SearchesTheProgramInThePathOfTheTaskEnvironment) {
  TempDir dir;
  EXPECT_EQ(RunToEnd(BaseSpec(dir, {"sh", "-c", "exit 4"})).exit_code, 4);
  TaskSpec spec = BaseSpec(dir, {"sh", "-c", "exit 4"});
  spec.env["PATH"] = dir.path();  // no sh there
  auto pid = SharedLauncher().Spawn(spec);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().code(), StatusCode::kNotFound);
  EXPECT_NE(pid.status().message().find("PATH=" + dir.path()), std::string::npos);
}

TEST(LauncherTest, RunsInTheWorkingDirectory) {
  TempDir dir;
  std::filesystem::create_directory(dir.File("work"));
  TaskSpec spec = BaseSpec(dir, {"/bin/pwd"});
  spec.cwd = dir.File("work");
  RunToEnd(spec);
  EXPECT_EQ(ReadFile(dir.File("out")),
            std::filesystem::canonical(dir.File("work")).string() + "\n");
}

TEST(LauncherTest, MissingProgramIsAnErrorNamingItAndLeavesNoZombie) {
  TempDir dir;
  for (const std::string program : {"/nonexistent/lockstep-prog", "lockstep-no-such-program"}) {
    auto pid = SharedLauncher().Spawn(BaseSpec(dir, {program}));
    ASSERT_FALSE(pid.ok());
    EXPECT_EQ(pid.status().code(), StatusCode::kNotFound);
    EXPECT_NE(pid.status().message().find(program), std::string::npos) << pid.status().message();
  }
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);  // the failed children were reaped
  EXPECT_EQ(errno, ECHILD);
}

TEST(LauncherTest, ProgramWithoutExecutePermissionIsPermissionDenied) {
  TempDir dir;
  WriteFile(dir.File("script"), "#!/bin/sh\nexit 0\n");
  chmod(dir.File("script").c_str(), 0644);
  auto pid = SharedLauncher().Spawn(BaseSpec(dir, {dir.File("script")}));
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().code(), StatusCode::kPermissionDenied) << pid.status().ToString();
}

TEST(LauncherTest, MissingWorkingDirectoryOrOutputDirectoryIsAnError) {
  TempDir dir;
  TaskSpec spec = BaseSpec(dir, {"/bin/true"});
  spec.cwd = dir.File("missing");
  auto pid = SharedLauncher().Spawn(spec);
  ASSERT_FALSE(pid.ok());
  EXPECT_NE(pid.status().message().find(dir.File("missing")), std::string::npos);

  spec = BaseSpec(dir, {"/bin/true"});
  spec.stdout_path = dir.File("missing/out");
  pid = SharedLauncher().Spawn(spec);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().code(), StatusCode::kNotFound);
  EXPECT_NE(pid.status().message().find("missing/out"), std::string::npos);
}

TEST(LauncherTest, RejectsBadSpecs) {
  TempDir dir;
  EXPECT_EQ(SharedLauncher().Spawn(BaseSpec(dir, {})).status().code(),
            StatusCode::kInvalidArgument);
  TaskSpec spec = BaseSpec(dir, {"/bin/true"});
  spec.memory_limit_mb = 10;  // a limit without a cgroup
  EXPECT_EQ(SharedLauncher().Spawn(spec).status().code(), StatusCode::kInvalidArgument);
  spec = BaseSpec(dir, {"/bin/true"});
  spec.cgroup_name = "../escape";
  EXPECT_EQ(SharedLauncher().Spawn(spec).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SharedLauncher().Wait(1).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(SharedLauncher().Signal(1, SIGTERM).code(), StatusCode::kNotFound);
}

TEST(LauncherTest, ReapReportsEachTaskOnceAndNeverReapsOtherChildren) {
  TempDir dir;
  const pid_t own = fork();  // a child of the test, not of the launcher
  if (own == 0) _exit(7);
  std::map<pid_t, int> expected;
  for (int code : {1, 2}) {
    auto pid =
        SharedLauncher().Spawn(BaseSpec(dir, {"/bin/sh", "-c", "exit " + std::to_string(code)}));
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    expected[*pid] = code;
  }
  std::map<pid_t, int> seen;
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (seen.size() < expected.size() && std::chrono::steady_clock::now() < deadline) {
    for (const auto& [pid, e] : SharedLauncher().Reap()) {
      EXPECT_EQ(seen.count(pid), 0u) << "reported twice";
      seen[pid] = e.exit_code;
    }
    std::this_thread::sleep_for(2ms);
  }
  EXPECT_EQ(seen, expected);
  int status = 0;
  ASSERT_EQ(waitpid(own, &status, 0), own);
  EXPECT_EQ(WEXITSTATUS(status), 7);
}

TEST(LauncherTest, ConcurrentSpawnWaitAndReapAccountForEveryTaskOnce) {
  TempDir dir;
  std::mutex mu;
  std::map<pid_t, int> expected, reported;
  std::atomic<bool> spawning_done{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        const int code = t * 10 + i;
        auto pid = SharedLauncher().Spawn(
            BaseSpec(dir, {"/bin/sh", "-c", "exit " + std::to_string(code)}));
        ASSERT_TRUE(pid.ok()) << pid.status().ToString();
        {
          std::lock_guard<std::mutex> lock(mu);
          expected[*pid] = code;
        }
        if (i % 2 == 0) continue;  // left to the reaper thread
        auto e = SharedLauncher().Wait(*pid);
        if (!e.ok()) continue;  // the reaper got it first: it reports it
        std::lock_guard<std::mutex> lock(mu);
        EXPECT_EQ(reported.count(*pid), 0u);
        reported[*pid] = e->exit_code;
      }
    });
  }
  std::thread reaper([&] {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (std::chrono::steady_clock::now() < deadline) {
      for (const auto& [pid, e] : SharedLauncher().Reap()) {
        std::lock_guard<std::mutex> lock(mu);
        EXPECT_EQ(reported.count(pid), 0u);
        reported[pid] = e.exit_code;
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        if (spawning_done && reported.size() == expected.size()) return;
      }
      std::this_thread::sleep_for(1ms);
    }
  });
  for (auto& th : threads) th.join();
  spawning_done = true;
  reaper.join();
  EXPECT_EQ(reported, expected);
}

TEST(LauncherTest, RunsAsAnotherUserWhenRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch users";
  const passwd* nobody = getpwnam("nobody");
  if (nobody == nullptr) GTEST_SKIP() << "no user 'nobody' on this host";
  TempDir dir;
  ASSERT_EQ(chown(dir.path().c_str(), nobody->pw_uid, nobody->pw_gid), 0);
  TaskSpec spec = BaseSpec(dir, {"/bin/sh", "-c", "id -u; id -g; id -G"});
  spec.uid = nobody->pw_uid;
  spec.gid = nobody->pw_gid;
  spec.groups = {nobody->pw_gid};
  EXPECT_EQ(RunToEnd(spec).exit_code, 0);
  const std::string id = std::to_string(nobody->pw_uid), gid = std::to_string(nobody->pw_gid);
  EXPECT_EQ(ReadFile(dir.File("out")), id + "\n" + gid + "\n" + gid + "\n");
  struct stat st {};
  ASSERT_EQ(stat(dir.File("out").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, nobody->pw_uid);  // created by the task, as the user

  // Output where only root may write fails: the file is opened after dropping privileges.
  TempDir root_only;
  chmod(root_only.path().c_str(), 0755);
  spec.stdout_path = root_only.File("out");
  auto pid = SharedLauncher().Spawn(spec);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().code(), StatusCode::kPermissionDenied) << pid.status().ToString();
}

TEST(LauncherTest, NonRootLauncherRunsTasksOnlyAsItsOwnUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to become another user for the test";
  const passwd* nobody = getpwnam("nobody");
  if (nobody == nullptr) GTEST_SKIP() << "no user 'nobody' on this host";
  const uid_t uid = nobody->pw_uid;
  const gid_t gid = nobody->pw_gid;
  const pid_t child = fork();
  if (child == 0) {  // no gtest assertions here: the exit code tells
    if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0) _exit(10);
    auto l = Launcher::Create({.cgroup_root = "", .log = [](const std::string&) {}});
    if (!l.ok()) _exit(11);
    TaskSpec spec;
    spec.argv = {"/bin/true"};
    spec.cwd = "/";
    spec.stdout_path = "/dev/null";
    spec.uid = 0;
    spec.gid = 0;
    if ((*l)->Spawn(spec).status().code() != StatusCode::kPermissionDenied) _exit(12);
    spec.uid = uid;
    spec.gid = gid;
    auto pid = (*l)->Spawn(spec);
    if (!pid.ok()) _exit(13);
    auto e = (*l)->Wait(*pid);
    _exit(e.ok() && e->exit_code == 0 ? 0 : 14);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(LauncherTest, CreateFailsWhenSigchldIsIgnored) {
  struct sigaction ign {
  }, old{};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGCHLD, &ign, &old);
  auto l = Launcher::Create({});
  sigaction(SIGCHLD, &old, nullptr);
  EXPECT_EQ(l.status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace lockstep::agent
