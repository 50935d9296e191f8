// cgroup parsing (pure), and the launcher's tasks in cgroups where the host gives them. Tests that
// need cgroups (or their memory / cpuset controllers) skip with the reason when the host has none.
#include "backend/agent/cgroup.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "backend/agent/launcher.h"
#include "backend/agent/launcher_test_util.h"
#include "common/wait_for.h"

namespace lockstep::agent {
namespace {

using namespace std::chrono_literals;
using testing::BaseSpec;
using testing::ReadFile;
using testing::ReadPidFile;
using testing::SelfExe;
using testing::SharedLauncher;
using testing::TempDir;
using testing::UniqueCgroupName;
using testing::WaitGone;

TEST(CgroupParseTest, UnifiedPathIsTheZeroLine) {
  EXPECT_EQ(ParseUnifiedCgroupPath("0::/system.slice/agent.service\n"),
            "/system.slice/agent.service");
  EXPECT_EQ(ParseUnifiedCgroupPath("4:memory:/x\n1:name=systemd:/\n0::/\n"), "/");
  EXPECT_EQ(ParseUnifiedCgroupPath("4:memory:/x\n3:cpuset:/\n"), std::nullopt);  // v1 only
}

TEST(CgroupParseTest, FindsCgroup2MountsWithEscapedPaths) {
  const std::string mountinfo =
      "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
      "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
      "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw\n"
      "42 31 0:38 /docker/abc /mnt/my\\040cg rw - cgroup2 none rw\n";
  const std::vector<Cgroup2Mount> mounts = ParseCgroup2Mounts(mountinfo);
  ASSERT_EQ(mounts.size(), 2u);
  EXPECT_EQ(mounts[0].mount_point, "/sys/fs/cgroup/unified");
  EXPECT_EQ(mounts[0].root, "/");
  EXPECT_EQ(mounts[1].mount_point, "/mnt/my cg");
  EXPECT_EQ(mounts[1].root, "/docker/abc");
}

// A hybrid host: the v2 tree has no memory or cpuset controller, v1 hierarchies have them.
TEST(CgroupParseTest, FindsAV1ControllersHierarchyAndThisProcessesPlaceInIt) {
  const std::string self =
      "9:name=systemd:/\n4:memory:/process_api/18c5\n3:cpuset,cpu:/\n1:cpu:/\n0::/\n";
  EXPECT_EQ(ParseV1CgroupPath(self, "memory"), "/process_api/18c5");
  EXPECT_EQ(ParseV1CgroupPath(self, "cpuset"), "/");
  EXPECT_EQ(ParseV1CgroupPath(self, "pids"), std::nullopt);
  EXPECT_EQ(ParseV1CgroupPath(self, "mem"), std::nullopt) << "a whole word of the list";
  const std::string mountinfo =
      "30 25 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate\n"
      "34 25 0:30 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
      "35 25 0:31 /outer /sys/fs/cgroup/cpuset,cpu rw - cgroup cgroup rw,cpuset,cpu\n";
  const std::vector<MountInfoEntry> mounts = ParseMountInfo(mountinfo);
  ASSERT_EQ(mounts.size(), 3u);
  EXPECT_EQ(mounts[1].super_options, "rw,memory");
  std::vector<Cgroup2Mount> memory = V1MountsOf(mounts, "memory");
  ASSERT_EQ(memory.size(), 1u);
  EXPECT_EQ(FindCgroupDir(memory, "/process_api/18c5")->dir,
            "/sys/fs/cgroup/memory/process_api/18c5");
  std::vector<Cgroup2Mount> cpuset = V1MountsOf(mounts, "cpuset");
  ASSERT_EQ(cpuset.size(), 1u);
  EXPECT_EQ(FindCgroupDir(cpuset, "/outer/job")->dir, "/sys/fs/cgroup/cpuset,cpu/job");
  EXPECT_TRUE(V1MountsOf(mounts, "cgroup2").empty()) << "the v2 mount is no v1 hierarchy";
}

TEST(CgroupParseTest, LocatesOwnCgroupUnderAMount) {
  const std::vector<Cgroup2Mount> host = {{"/sys/fs/cgroup", "/"}};
  EXPECT_EQ(FindCgroupDir(host, "/")->dir, "/sys/fs/cgroup");
  EXPECT_EQ(FindCgroupDir(host, "/a/b")->dir, "/sys/fs/cgroup/a/b");
  EXPECT_EQ(FindCgroupDir(host, "/a/b")->mount_point, "/sys/fs/cgroup");
  // A container without a cgroup namespace sees its own cgroup mounted at /sys/fs/cgroup.
  const std::vector<Cgroup2Mount> container = {{"/sys/fs/cgroup", "/docker/abc"}};
  EXPECT_EQ(FindCgroupDir(container, "/docker/abc")->dir, "/sys/fs/cgroup");
  EXPECT_EQ(FindCgroupDir(container, "/docker/abc/x")->dir, "/sys/fs/cgroup/x");
  EXPECT_FALSE(FindCgroupDir(container, "/docker/abcd").has_value());
  EXPECT_FALSE(FindCgroupDir(host, "/../outside").has_value());
}

TEST(CgroupParseTest, ReadsFlatKeyedFiles) {
  const std::string events = "low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n";
  EXPECT_EQ(ParseKeyedValue(events, "oom_kill"), 1);
  EXPECT_EQ(ParseKeyedValue(events, "oom"), 2);
  EXPECT_EQ(ParseKeyedValue(events, "max"), 12);
  EXPECT_EQ(ParseKeyedValue(events, "oom_group"), std::nullopt);
  EXPECT_EQ(ParseKeyedValue("populated 1\nfrozen 0\n", "populated"), 1);
  EXPECT_EQ(ParseControllers("cpuset cpu io memory pids\n"),
            (std::set<std::string>{"cpu", "cpuset", "io", "memory", "pids"}));
  EXPECT_TRUE(ParseControllers("\n").empty());
}

TEST(CgroupParseTest, FormatsCpuLists) {
  EXPECT_EQ(FormatCpuList({}), "");
  EXPECT_EQ(FormatCpuList({0}), "0");
  EXPECT_EQ(FormatCpuList({3, 0, 1, 2, 7, 7}), "0-3,7");
  EXPECT_EQ(FormatCpuList({1, 3, 5, 6}), "1,3,5-6");
}

TEST(CgroupParseTest, ValidatesNames) {
  EXPECT_TRUE(ValidateCgroupName("job_42/step_batch").ok());
  EXPECT_TRUE(ValidateCgroupName("job-42.x/step_0").ok());
  for (const char* bad : {"", "/job", "job/", "job//step", "..", "job/../x", "a b",
                          "job/cgroup.procs", "memory.max", "job\n"}) {
    EXPECT_FALSE(ValidateCgroupName(bad).ok()) << "'" << bad << "'";
  }
}

TEST(CgroupSetupTest, ExplicitRootOutsideCgroupfsIsAnError) {
  TempDir dir;
  auto l = Launcher::Create({.cgroup_root = dir.File("lockstep"), .log = {}});
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), StatusCode::kFailedPrecondition) << l.status().ToString();
  EXPECT_EQ(Launcher::Create({.cgroup_root = "relative", .log = {}}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(CgroupSetupTest, LimitsAreIgnoredWhereTheHostHasNoController) {
  // Runs everywhere: with a memory controller the task fits; without, the limit is ignored.
  TempDir dir;
  TaskSpec spec = BaseSpec(dir, {SelfExe(), "--alloc-mb", "5"});
  spec.cgroup_name = UniqueCgroupName("fits");
  spec.memory_limit_mb = 64;
  auto pid = SharedLauncher().Spawn(spec);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  auto e = SharedLauncher().Wait(*pid);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->exit_code, 0);
  EXPECT_FALSE(e->oom_killed);
  EXPECT_EQ(ReadFile(dir.File("out")), "allocated 5 MiB\n");
}

#define SKIP_WITHOUT(condition)                                    \
  if (!(condition)) {                                              \
    GTEST_SKIP() << "skipped, this host gives no " #condition ": " \
                 << SharedLauncher().cgroup_note();                \
  }

TEST(CgroupLauncherTest, TaskRunsInItsCgroupWhichIsRemovedAfterwards) {
  SKIP_WITHOUT(SharedLauncher().cgroups_enabled());
  TempDir dir;
  TaskSpec spec = BaseSpec(dir, {"/bin/cat", "/proc/self/cgroup"});
  spec.cgroup_name = UniqueCgroupName("step_batch");
  auto pid = SharedLauncher().Spawn(spec);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  const std::string path = SharedLauncher().cgroup_root() + "/" + spec.cgroup_name;
  // The name is taken while the task lives.
  EXPECT_EQ(SharedLauncher().Spawn(spec).status().code(), StatusCode::kAlreadyExists);
  ASSERT_TRUE(SharedLauncher().Wait(*pid).ok());
  const std::string out = ReadFile(dir.File("out"));
  EXPECT_NE(out.find("/" + spec.cgroup_name + "\n"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(path).parent_path()));
}

TEST(CgroupLauncherTest, ProcessThatLeftTheSessionIsKilledWithTheTask) {
  SKIP_WITHOUT(SharedLauncher().cgroups_enabled());
  TempDir dir;
  TaskSpec spec = BaseSpec(dir, {SelfExe(), "--escape-session", dir.File("pid")});
  spec.cgroup_name = UniqueCgroupName("step_0");
  auto pid = SharedLauncher().Spawn(spec);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  const pid_t escaped = ReadPidFile(dir.File("pid"), 5s);
  ASSERT_GT(escaped, 0);
  EXPECT_NE(getpgid(escaped), *pid);  // out of the process group: only the cgroup holds it
  auto e = SharedLauncher().Wait(*pid);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->exit_code, 0);
  const bool gone = WaitGone(escaped, 2s);
  if (!gone) kill(escaped, SIGKILL);
  EXPECT_TRUE(gone) << "process " << escaped << " outlived its task";
}

TEST(CgroupLauncherTest, OutOfMemoryIsReported) {
  SKIP_WITHOUT(SharedLauncher().memory_limits_enabled());
  TempDir dir;
  TaskSpec spec = BaseSpec(dir, {SelfExe(), "--alloc-mb", "200"});
  spec.cgroup_name = UniqueCgroupName("oom");
  spec.memory_limit_mb = 50;
  auto pid = SharedLauncher().Spawn(spec);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  auto e = SharedLauncher().Wait(*pid);
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->oom_killed);
  EXPECT_EQ(e->signal, SIGKILL);
  EXPECT_EQ(ReadFile(dir.File("out")), "");
}

// Wherever the limits come from (v2, or v1 on a hybrid host), the task's cgroups go with it.
TEST(CgroupLauncherTest, ALimitedTasksCgroupsAreAllRemovedAfterwards) {
  SKIP_WITHOUT(SharedLauncher().memory_limits_enabled());
  TempDir dir;
  TaskSpec spec = BaseSpec(dir, {"/bin/cat", "/proc/self/cgroup"});
  spec.cgroup_name = UniqueCgroupName("limited");
  spec.memory_limit_mb = 64;
  spec.cpus = {0};
  auto pid = SharedLauncher().Spawn(spec);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  ASSERT_TRUE(SharedLauncher().Wait(*pid).ok());
  // Every hierarchy it joined (v2, and v1's memory and cpuset on a hybrid host) names its
  // cgroup; none of them is left behind.
  const std::string unique = spec.cgroup_name.substr(0, spec.cgroup_name.find('/'));
  const std::string out = ReadFile(dir.File("out"));
  EXPECT_NE(out.find("/" + spec.cgroup_name + "\n"), std::string::npos) << out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator("/sys/fs/cgroup", ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    EXPECT_NE(it->path().filename().string(), unique) << it->path() << " outlived its task";
}

// -c1: the task may use one CPU's worth of time (the cpu controller's quota, v2's cpu.max or
// v1's CFS quota on a hybrid host), however many threads it runs.
TEST(CgroupLauncherTest, CpuLimitSetsTheQuotaOfTheTasksCgroup) {
  SKIP_WITHOUT(SharedLauncher().cpu_limits_enabled());
  TempDir dir;
  TaskSpec spec = BaseSpec(
      dir, {"/bin/sh", "-c",
            "cat /proc/self/cgroup; while [ ! -e " + dir.File("go") + " ]; do sleep 0.05; done"});
  spec.cgroup_name = UniqueCgroupName("cpu");
  spec.cpu_limit = 1;
  auto pid = SharedLauncher().Spawn(spec);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  std::string out;
  ASSERT_TRUE(lockstep::testing::WaitFor(
      [&] {
        out = ReadFile(dir.File("out"));
        return out.find("0::") != std::string::npos;
      },
      std::chrono::seconds(10)));
  // The task's cgroup in whichever hierarchy has the cpu controller.
  const std::string mountinfo = ReadFile("/proc/self/mountinfo");
  std::string quota;
  if (auto v1 = ParseV1CgroupPath(out, "cpu")) {
    if (auto d = FindCgroupDir(V1MountsOf(ParseMountInfo(mountinfo), "cpu"), *v1))
      quota = ReadFile(d->dir + "/cpu.cfs_quota_us");
  }
  if (quota.empty() || quota == "-1\n") {
    if (auto v2 = ParseUnifiedCgroupPath(out))
      if (auto d = FindCgroupDir(ParseCgroup2Mounts(mountinfo), *v2))
        quota = ReadFile(d->dir + "/cpu.max");
  }
  std::ofstream(dir.File("go")) << "";
  ASSERT_TRUE(SharedLauncher().Wait(*pid).ok());
  EXPECT_TRUE(quota == "100000\n" || quota == "100000 100000\n") << quota << out;
}

TEST(CgroupLauncherTest, CpusetLimitsTheTaskToItsCpus) {
  SKIP_WITHOUT(SharedLauncher().cpu_binding_enabled());
  TempDir dir;
  TaskSpec spec = BaseSpec(dir, {"/bin/grep", "^Cpus_allowed_list", "/proc/self/status"});
  spec.cgroup_name = UniqueCgroupName("cpus");
  spec.cpus = {0};
  auto pid = SharedLauncher().Spawn(spec);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  ASSERT_TRUE(SharedLauncher().Wait(*pid).ok());
  EXPECT_EQ(ReadFile(dir.File("out")), "Cpus_allowed_list:\t0\n");
}

}  // namespace
}  // namespace lockstep::agent
