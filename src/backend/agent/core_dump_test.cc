// Where a core is looked for and how it is kept (core_dump.h), and the programs the agent runs
// as a job's user (run_as_user.h). The keeping runs as the caller here; as root, the tests act
// as `nobody` where they need a user who is not root.
#include <gtest/gtest.h>

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "backend/agent/core_dump.h"
#include "backend/agent/run_as_user.h"

namespace lockstep::agent {
namespace {

using namespace std::chrono_literals;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

class CoreDumpTest : public ::testing::Test {
 protected:
  CoreDumpTest() {
    char tmpl[] = "/tmp/lockstep-core-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  ~CoreDumpTest() override { std::filesystem::remove_all(dir_); }
  CoreDumpContext Context() const {
    return {42, "node1", 4711, 11, dir_, ::getuid(), ::getgid(), "h"};
  }
  std::string dir_;
};

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
  const std::string expected =
      "core dumped, piped to /usr/share/apport/apport by kernel.core_pattern (not kept by "
      "lockstep; ask that handler, e.g. coredumpctl)";
  EXPECT_EQ(KeepCoreDump({"|/usr/share/apport/apport -p%p", false}, c, "/nonexistent", 1s),
            expected);
  EXPECT_EQ(KeepCoreDumpAsCaller({"|/usr/share/apport/apport -p%p", false}, c), expected);
}

TEST_F(CoreDumpTest, MovesTheCoreIntoTheJobsDirectory) {
  std::ofstream(dir_ + "/core.4711") << std::string(1000, 'x');
  const std::string evidence = KeepCoreDumpAsCaller({"core.%p", false}, Context());
  const std::string kept = dir_ + "/cores-42/core.node1.4711";
  EXPECT_EQ(evidence, "core dumped: " + kept + " (1000 bytes)");
  EXPECT_TRUE(std::filesystem::exists(kept));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/core.4711"));
  EXPECT_EQ(KeepCoreDumpAsCaller({"core.%p", false}, Context()).rfind(
                "core dumped, but no file matches", 0),
            0u);
}

// `ln -s /root cores-$SLURM_JOB_ID; kill -SEGV $$` (issue 27): the link is never followed; the
// core stays where the kernel wrote it and the link's target is untouched.
TEST_F(CoreDumpTest, APlantedLinkInPlaceOfTheJobsDirectoryIsNotFollowed) {
  const std::string elsewhere = dir_ + "/elsewhere";
  std::filesystem::create_directory(elsewhere);
  std::filesystem::create_directory_symlink(elsewhere, dir_ + "/cores-42");
  std::ofstream(dir_ + "/core.4711") << std::string(10, 'x');
  const std::string evidence = KeepCoreDumpAsCaller({"core.%p", false}, Context());
  EXPECT_EQ(evidence, "core dumped: " + dir_ + "/core.4711 (10 bytes)");
  EXPECT_TRUE(std::filesystem::is_empty(elsewhere));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/core.4711"));
}

TEST_F(CoreDumpTest, AFileInPlaceOfTheJobsDirectoryLeavesTheCoreWhereItIs) {
  std::ofstream(dir_ + "/cores-42") << "mine";
  std::ofstream(dir_ + "/core.4711") << "x";
  EXPECT_EQ(KeepCoreDumpAsCaller({"core.%p", false}, Context()),
            "core dumped: " + dir_ + "/core.4711 (1 bytes)");
  std::ifstream in(dir_ + "/cores-42");
  std::string text;
  in >> text;
  EXPECT_EQ(text, "mine");
}

// The keeper, run as the job's user, cannot reach what the user cannot: the working directory
// is root's, 0700.
TEST_F(CoreDumpTest, TheKeeperActsWithTheUsersRights) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  const passwd* nobody = ::getpwnam("nobody");
  if (nobody == nullptr) GTEST_SKIP() << "no user 'nobody' on this host";
  ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
  std::ofstream(dir_ + "/core.4711") << "x";
  CoreDumpContext c = Context();
  c.uid = nobody->pw_uid;
  c.gid = nobody->pw_gid;
  // /bin/sh stands in for the keeper: what matters is whose rights it runs with.
  const std::string evidence = KeepCoreDump({"core.%p", false}, c, "/bin/sh", 5s);
  EXPECT_TRUE(Contains(evidence, "core dumped, not kept: cannot change to working directory '" +
                                     dir_ + "' as uid " + std::to_string(nobody->pw_uid)))
      << evidence;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/cores-42"));
}

TEST(RunAsUser, RunsAsTheUserInTheDirectoryAndReturnsTheOutput) {
  UserCommand c;
  c.argv = {"/bin/sh", "-c", "id -u; pwd"};
  c.uid = ::getuid();
  c.gid = ::getgid();
  c.cwd = "/tmp";
  if (::getuid() == 0) {
    if (const passwd* nobody = ::getpwnam("nobody")) {
      c.uid = nobody->pw_uid;
      c.gid = nobody->pw_gid;
    }
  }
  Result<std::string> out = RunAsUser(c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, std::to_string(c.uid) + "\n/tmp\n");
}

TEST(RunAsUser, AProgramThatOverstaysIsKilledAndSaidSo) {
  UserCommand c;
  c.argv = {"/bin/sh", "-c", "sleep 300"};
  c.uid = ::getuid();
  c.gid = ::getgid();
  c.timeout = 200ms;
  const auto start = std::chrono::steady_clock::now();
  Result<std::string> out = RunAsUser(c);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 60s);  // not the program's 300 s
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(out.status().message(), "did not finish within 200 ms"))
      << out.status().message();
}

TEST(RunAsUser, AFailureCarriesItsFirstLine) {
  UserCommand c;
  c.argv = {"/bin/sh", "-c", "echo broken >&2; exit 4"};
  c.uid = ::getuid();
  c.gid = ::getgid();
  Result<std::string> out = RunAsUser(c);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(Contains(out.status().message(), "exited 4: broken")) << out.status().message();
  c.argv = {"sh"};
  EXPECT_EQ(RunAsUser(c).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lockstep::agent
