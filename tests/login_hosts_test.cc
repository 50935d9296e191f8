// `lockstep login` on bare hosts (docs/login.md, "On bare hosts"): the user's shell here, in
// their home, reaching lockstepd as the commands do, and the command's status back; lockstepd
// says how a login is made; a site's own name for the command.
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <utility>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(LoginOnHosts, TheUsersShellHereReachesLockstepdAndGivesItsStatusBack) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  EXPECT_EQ(c.Get("/api/v1/login")["mode"], "hosts");
  const passwd* me = ::getpwuid(::getuid());
  ASSERT_NE(me, nullptr);

  // The shell of a login runs in the home, as the user, and the Slurm commands work from it.
  // (lockstep's sbatch by its path: this host may have Slurm's first on PATH.)
  CommandResult r = c.Run({"login", "--", "id", "-un;", "pwd;", LOCKSTEP_BIN_DIR "/lockstep", "sbatch",
                           "--parsable", "--wrap", "true"},
                          "/", -1, "", {{"HOME", c.dir()}, {"SHELL", "/bin/sh"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, std::string(me->pw_name) + "\n" + c.dir() + "\n")) << r.out;
  const std::string id = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  EXPECT_EQ(c.WaitJob(std::stoull(id))["state"], "COMPLETED");

  // Its exit status and standard input, as ssh gives them.
  r = c.Run({"login", "--", "exit", "9"}, "/", -1, "", {{"SHELL", "/bin/sh"}});
  EXPECT_EQ(r.exit_code, 9);
  r = c.Run({"login", "--", "tr", "a-z", "A-Z"}, "/", -1, "line\n", {{"SHELL", "/bin/sh"}});
  EXPECT_EQ(r.out, "LINE\n");
}

// What a command printed (stdout and stderr) and its exit status, through the shell.
std::pair<std::string, int> Shell(const std::string& line) {
  std::string out;
  FILE* p = ::popen((line + " 2>&1").c_str(), "r");
  if (p == nullptr) return {"", -1};
  char buf[1024];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

TEST(LoginOnHosts, TheSitesOwnNameForLoginWorksThroughALink) {
  ClusterOptions o;
  o.extra_yaml = "login:\n  alias: slogin\n";
  Cluster c(o);
  ASSERT_TRUE(c.Start(/*with_agent=*/false));
  // Up once it answers (no agent: no node to wait for).
  ASSERT_TRUE(WaitFor([&] { return !c.Get("/api/v1/login").contains("error"); }, std::chrono::seconds(20)));
  EXPECT_EQ(c.Get("/api/v1/login")["alias"], "slogin") << c.Get("/api/v1/login").dump();
  for (const char* name : {"slogin", "blogin"})
    ASSERT_EQ(::symlink(LOCKSTEP_BIN_DIR "/lockstep", (c.dir() + "/" + name).c_str()), 0);
  const std::string env = "LOCKSTEP_STATE_DIR=" + c.dir() + " SHELL=/bin/sh ";
  auto [out, status] = Shell(env + c.dir() + "/slogin -- echo via-alias");
  EXPECT_EQ(status, 0);
  EXPECT_EQ(out, "via-alias\n");
  std::tie(out, status) = Shell(env + c.dir() + "/blogin -- echo no");
  EXPECT_EQ(status, 2);
  EXPECT_EQ(out, "lockstep: unknown command name 'blogin' (try 'lockstep help')\n");
}

// An identity file's default_account is the user's default account, as sacctmgr's
// DefaultAccount: a job without -A charges it, and sacctmgr shows it.
TEST(Identity, AUsersFileGivesTheirDefaultAccount) {
  char tmpl[] = "/tmp/lockstep-identity-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  std::ofstream(dir + "/users.yaml")
      << "users:\n  - {name: nobody, uid: 65534, gid: 65534, default_account: physics}\n";
  ClusterOptions o;
  o.extra_yaml = "accounts:\n  - {name: physics}\n  - {name: chem}\nusers:\n"
                 "  - {name: nobody, account: chem}\nidentity:\n  users_file: " + dir + "/users.yaml\n";
  {
    Cluster c(o);
    ASSERT_TRUE(c.Start());
    CommandResult r = c.Run({"sbatch", "--parsable", "--wrap", "true"}, c.work(), 65534);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(c.Job(std::stoull(r.out)).value("account", ""), "physics");
    r = c.Run({"sacctmgr", "-n", "-P", "show", "user", "nobody", "format=DefaultAccount"});
    EXPECT_EQ(r.out, "physics\n") << r.err;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lockstep::testing
