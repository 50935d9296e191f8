// sacctmgr end to end: operators' changes to QoS, accounts and users through the real CLI,
// applied to scheduling at once (a limit holds a job with Slurm's reason, removing it lets the
// job start), durable across a restart of lockstepd, refused to ordinary users; and the
// listings' formats.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

using namespace std::chrono_literals;

bool WaitState(Cluster& c, unsigned long long id, const std::string& state,
               const std::string& reason = "") {
  return WaitFor(
      [&] {
        nlohmann::json j = c.Job(id);
        return j.value("state", "") == state && (reason.empty() || j.value("reason", "") == reason);
      },
      20s);
}

TEST(Sacctmgr, QosLimitHoldsAJobSurvivesARestartAndItsRemovalStartsTheJob) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  CommandResult r =
      c.Run({"sacctmgr", "-i", "modify", "qos", "normal", "set", "GrpTRES=gres/gpu=2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, " Modified qos...\n  normal\n");
  r = c.Run({"sacctmgr", "-n", "-P", "show", "qos", "format=Name,GrpTRES"});
  EXPECT_EQ(r.out, "normal|gres/gpu=2\n");

  unsigned long long first = Submit(c, {"--gpus=2", "--wrap", "sleep 300"});
  ASSERT_TRUE(WaitState(c, first, "RUNNING"));
  unsigned long long second = Submit(c, {"--gpus=2", "--wrap", "sleep 300"});
  EXPECT_TRUE(WaitState(c, second, "PENDING", "QOSGrpGRES")) << c.Job(second).dump();

  c.KillDaemon();
  c.StartDaemon();
  ASSERT_TRUE(WaitState(c, first, "RUNNING")) << "lockstepd is back";
  r = c.Run({"sacctmgr", "-n", "-P", "show", "qos", "normal", "format=Name,GrpTRES"});
  EXPECT_EQ(r.out, "normal|gres/gpu=2\n") << "the change survives a restart";
  EXPECT_TRUE(WaitState(c, second, "PENDING", "QOSGrpGRES")) << c.Job(second).dump();

  r = c.Run({"sacctmgr", "-i", "modify", "qos", "where", "name=normal", "set", "GrpTRES=gres/gpu=-1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(WaitState(c, second, "RUNNING")) << c.Job(second).dump();
  EXPECT_EQ(c.Run({"scancel", std::to_string(first), std::to_string(second)}).exit_code, 0);
}

TEST(Sacctmgr, AccountsAndUsersAreAddedListedLimitedAndDeleted) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  CommandResult r = c.Run({"sacctmgr", "-i", "add", "account", "physics", "Description=Physics",
                           "Organization=science", "fairshare=10", "GrpTRES=gres/gpu=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" Adding Account(s)\n  physics\n"), std::string::npos) << r.out;
  r = c.Run({"sacctmgr", "-i", "add", "user", "root", "account=physics", "MaxSubmitJobs=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  r = c.Run({"sacctmgr", "show", "account", "physics"});
  EXPECT_EQ(r.out,
            "   Account                Descr                  Org \n"
            "---------- -------------------- -------------------- \n"
            "   physics              Physics              science \n");
  r = c.Run({"sacctmgr", "-P", "-n", "list", "assoc", "where", "account=physics",
             "format=Account,User,Share,GrpTRES,MaxSubmit"});
  EXPECT_EQ(r.out, "physics||10|gres/gpu=1|\nphysics|root|1||2\n");
  r = c.Run({"sacctmgr", "-p", "show", "user", "root", "-s", "format=User,DefaultAccount,Account"});
  EXPECT_EQ(r.out, "User|Def Acct|Account|\nroot|physics|physics|\n");

  // The account's GrpTRES holds the second one-GPU job; MaxSubmitJobs=2 refuses a third.
  unsigned long long a = Submit(c, {"-A", "physics", "--gpus=1", "--wrap", "sleep 300"});
  unsigned long long b = Submit(c, {"-A", "physics", "--gpus=1", "--wrap", "sleep 300"});
  ASSERT_TRUE(WaitState(c, a, "RUNNING"));
  EXPECT_TRUE(WaitState(c, b, "PENDING", "AssocGrpGRES")) << c.Job(b).dump();
  r = c.Run({"sbatch", "-A", "physics", "--wrap", "true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Job violates accounting/QOS policy"), std::string::npos) << r.err;

  // Jobs use the account: it is not deleted.
  r = c.Run({"sacctmgr", "-i", "delete", "account", "physics"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Job(s) active"), std::string::npos) << r.err;
  EXPECT_EQ(c.Run({"scancel", std::to_string(a), std::to_string(b)}).exit_code, 0);
  ASSERT_TRUE(WaitState(c, a, "CANCELLED") && WaitState(c, b, "CANCELLED"));
  r = c.Run({"sacctmgr", "-i", "delete", "account", "physics"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, " Deleting account(s)...\n  physics\n");
  r = c.Run({"sacctmgr", "-n", "-P", "show", "account", "format=Account"});
  EXPECT_EQ(r.out.find("physics"), std::string::npos) << r.out;
  r = c.Run({"sacctmgr", "-i", "delete", "account", "physics"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, " Nothing deleted\n");
}

// Running-job counts: a user's MaxJobs and a QoS's GrpJobs hold jobs with Slurm's reasons,
// are listed, and a cleared limit lets the job start.
TEST(Sacctmgr, JobCountLimitsHoldJobsUntilCleared) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  CommandResult r = c.Run({"sacctmgr", "-i", "add", "account", "chem"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = c.Run({"sacctmgr", "-i", "add", "user", "root", "account=chem", "MaxJobs=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = c.Run({"sacctmgr", "-n", "-P", "list", "assoc", "where", "account=chem", "format=User,MaxJobs"});
  EXPECT_EQ(r.out, "|\nroot|1\n");

  unsigned long long a = Submit(c, {"-A", "chem", "-n1", "--wrap", "sleep 300"});
  unsigned long long b = Submit(c, {"-A", "chem", "-n1", "--wrap", "sleep 300"});
  ASSERT_TRUE(WaitState(c, a, "RUNNING"));
  EXPECT_TRUE(WaitState(c, b, "PENDING", "AssocMaxJobsLimit")) << c.Job(b).dump();

  r = c.Run({"sacctmgr", "-i", "modify", "qos", "normal", "set", "GrpJobs=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = c.Run({"sacctmgr", "-n", "-P", "show", "qos", "normal", "format=Name,GrpJobs,MaxJobsPU"});
  EXPECT_EQ(r.out, "normal|1|\n");
  r = c.Run({"sacctmgr", "-i", "modify", "user", "root", "where", "account=chem", "set", "MaxJobs=-1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(WaitState(c, b, "PENDING", "QOSGrpJobsLimit")) << c.Job(b).dump();
  r = c.Run({"sacctmgr", "-i", "modify", "qos", "normal", "set", "GrpJobs=-1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(WaitState(c, b, "RUNNING")) << c.Job(b).dump();
  EXPECT_EQ(c.Run({"scancel", std::to_string(a), std::to_string(b)}).exit_code, 0);
}

TEST(Sacctmgr, AChangeWaitsForYesAndBadInputChangesNothing) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  CommandResult r = c.Run({"sacctmgr", "add", "qos", "high", "Priority=100"}, "", -1, "n\n");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Would you like to commit changes? (You have 30 seconds to decide)\n(N/y): "),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" Changes Discarded"), std::string::npos) << r.out;
  EXPECT_EQ(c.Run({"sacctmgr", "-n", "-P", "show", "qos", "format=Name"}).out, "normal\n");

  r = c.Run({"sacctmgr", "add", "qos", "high", "Priority=100", "MaxWall=2-00:00:00",
             "MaxTRESPerUser=gres/gpu=4,cpu=8"}, "", -1, "y\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = c.Run({"sacctmgr", "-n", "-P", "show", "qos", "high",
             "format=Name,Priority,MaxWall,MaxTRESPU,PreemptMode"});
  EXPECT_EQ(r.out, "high|100|2-00:00:00|cpu=8,gres/gpu=4|OFF\n");

  // Each refused with its place named, and nothing changed.
  struct Bad {
    std::vector<std::string> args;
    std::string err;
  };
  for (const Bad& b : std::vector<Bad>{
           {{"sacctmgr", "-i", "modify", "qos", "high", "set", "GrpTRES=gres/tpu=1"}, "unknown TRES 'gres/tpu'"},
           {{"sacctmgr", "-i", "modify", "qos", "high", "set", "Priority=100", "MaxWall=soon"}, "Bad MaxWall value"},
           {{"sacctmgr", "-i", "modify", "qos", "high", "set", "GrpWall=60"}, "Unknown option: grpwall"},
           {{"sacctmgr", "-i", "modify", "qos", "high", "set", "GrpJobs=-2"}, "Bad GrpJobs value"},
           {{"sacctmgr", "-i", "add", "user", "bob", "account=nosuch"}, "Account 'nosuch' does not exist"},
           {{"sacctmgr", "-i", "delete", "qos", "normal"}, "QOS normal is the default QOS"},
       }) {
    r = c.Run(b.args);
    EXPECT_EQ(r.exit_code, 1) << b.args.back();
    EXPECT_NE(r.err.find(b.err), std::string::npos) << b.args.back() << ": " << r.err;
  }
  EXPECT_EQ(c.Run({"sacctmgr", "-n", "-P", "show", "qos", "high", "format=Priority"}).out, "100\n");
  r = c.Run({"sacctmgr", "show", "qos", "format=Bogus"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "sacctmgr: error: Unknown field 'Bogus'\n");
}

TEST(Sacctmgr, AnOrdinaryUserMayListButNotChange) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  Cluster c;
  ASSERT_TRUE(c.Start());
  const int nobody = 65534;
  CommandResult r = c.Run({"sacctmgr", "-i", "add", "account", "mine"}, "", nobody);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, " Problem adding: Access/permission denied\n");
  r = c.Run({"sacctmgr", "-i", "modify", "qos", "normal", "set", "Priority=5"}, "", nobody);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, " Error with request: Access/permission denied\n");
  r = c.Run({"sacctmgr", "-n", "-P", "list", "account", "format=Account"}, "", nobody);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "root\n");
}

}  // namespace
}  // namespace lockstep::testing
