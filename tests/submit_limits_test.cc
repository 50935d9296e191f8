// Issue 27, parts 3 and 4a, end to end through the real lockstepd, agent and CLI: `sbatch -A`
// of an account that is not the user's is refused with Slurm's words (it created the account),
// a 5 MB name and a 5 MB script are refused (they were kept in memory and in the store), and
// MaxJobCount and the per-user MaxSubmitJobs refuse jobs beyond them. Each refusal changes
// nothing; `scontrol show config` shows the limits.
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

std::string Me() {
  const passwd* pw = ::getpwuid(::getuid());
  return pw ? pw->pw_name : std::to_string(::getuid());
}

std::size_t JobCount(Cluster& c) {
  return c.Get("/api/v1/jobs?all=1")["jobs"].size();
}

constexpr char kInvalidAccount[] = "Invalid account or account/partition combination specified";

TEST(SubmitLimits, AnAccountThatIsNotTheUsersIsRefusedWithSlurmsMessage) {
  ClusterOptions o;
  o.extra_yaml = "accounts:\n  - {name: physics}\n  - {name: biology}\n"
                 "users:\n  - {name: " + Me() + ", account: physics, max_jobs: 1}\n";
  Cluster c(o);
  ASSERT_TRUE(c.Start());
  for (const std::string account : {"fresh-name", "biology"}) {
    CommandResult r = c.Run({"sbatch", "-A", account, "--wrap", "true"});
    EXPECT_EQ(r.exit_code, 1) << account;
    EXPECT_EQ(r.err, std::string("sbatch: error: Batch job submission failed: ") +
                         kInvalidAccount + "\n");
  }
  CommandResult r = c.Run({"srun", "-A", "fresh-name", "true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, std::string("srun: error: Unable to allocate resources: ") + kInvalidAccount +
                       "\n");
  r = c.Run({"salloc", "-A", "fresh-name", "--no-shell"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, std::string("salloc: error: Job submit/allocate failed: ") + kInvalidAccount +
                       "\n");
  EXPECT_EQ(JobCount(c), 0u);
  r = c.Run({"sacctmgr", "-n", "-P", "show", "account", "format=Account"});
  EXPECT_EQ(r.out, "root\nphysics\nbiology\n") << "no account was created";

  // The user's own account; a pending job's account moves only to another of theirs.
  const unsigned long long held = Submit(c, {"-A", "physics", "-H", "--wrap", "true"});
  ASSERT_GT(held, 0u);
  r = c.Run({"scontrol", "update", "JobId=" + std::to_string(held), "Account=biology"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(kInvalidAccount), std::string::npos) << r.err;
  EXPECT_EQ(c.Job(held).value("account", ""), "physics");
  EXPECT_EQ(JobCount(c), 1u);
}

TEST(SubmitLimits, WithoutAccountsUsersRunInTheDefaultAccountAndMayNameNoOther) {
  Cluster c;  // lockstep up's kind of cluster: no accounts or users in the file
  ASSERT_TRUE(c.Start());
  ASSERT_GT(Submit(c, {"-H", "--wrap", "true"}), 0u);
  CommandResult r = c.Run({"sbatch", "-A", "anyname", "--wrap", "true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, std::string("sbatch: error: Batch job submission failed: ") +
                       kInvalidAccount + "\n");
  EXPECT_EQ(JobCount(c), 1u);
}

TEST(SubmitLimits, AFiveMegabyteNameOrScriptIsRefusedNamingTheLimit) {
  ClusterOptions o;
  o.extra_yaml = "scheduler:\n  max_env_size: 65536\n";
  Cluster c(o);
  ASSERT_TRUE(c.Start());
  const std::string five_mb(5u << 20, 'n');
  // Through #SBATCH: a single argument of the command line cannot be 5 MB (MAX_ARG_STRLEN).
  std::ofstream(c.work() + "/big-name.sh") << "#!/bin/sh\n#SBATCH -J " << five_mb << "\ntrue\n";
  CommandResult r = c.Run({"sbatch", "big-name.sh"}, c.work());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "sbatch: error: Batch job submission failed: Pathname of a file, directory or other "
            "parameter too long: the job name is 5242880 bytes, more than "
            "max_name_length=1024\n");
  const std::string script = "#!/bin/sh\n#" + five_mb + "\ntrue\n";
  std::ofstream(c.work() + "/big-script.sh") << script;
  r = c.Run({"sbatch", "big-script.sh"}, c.work());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "sbatch: error: Batch job submission failed: Pathname of a file, directory or other "
            "parameter too long: the batch script is " +
                std::to_string(script.size()) + " bytes, more than max_script_size=4194304\n");
  r = c.Run({"sbatch", "--wrap", "true"}, c.work(), -1, "",
            {{"BIG", std::string(100000, 'x')}});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the job's environment is "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("more than max_env_size=65536"), std::string::npos) << r.err;
  EXPECT_EQ(JobCount(c), 0u);

  // A pending job's name: the same limit, and the name stays.
  const unsigned long long held = Submit(c, {"-H", "-J", "small", "--wrap", "true"});
  ASSERT_GT(held, 0u);
  r = c.Run({"scontrol", "update", "JobId=" + std::to_string(held),
             "Name=" + std::string(1025, 'n')});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the job name is 1025 bytes, more than max_name_length=1024"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(c.Job(held).value("name", ""), "small");
  // A comment has Slurm's bound on short text (1024 bytes).
  r = c.Run({"scontrol", "update", "JobId=" + std::to_string(held), "Comment=" + std::string(1025, 'c')});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the comment is 1025 bytes, more than 1024"), std::string::npos) << r.err;
  r = c.Run({"scontrol", "update", "JobId=" + std::to_string(held), "Comment=note"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(c.Job(held).value("comment", ""), "note");
}

TEST(SubmitLimits, MaxJobCountAndMaxSubmitJobsRefuseJobsBeyondThem) {
  ClusterOptions o;
  o.extra_yaml = "scheduler:\n  max_job_count: 3\n  max_submit_jobs: 2\n";
  Cluster c(o);
  ASSERT_TRUE(c.Start());
  CommandResult r = c.Run({"scontrol", "show", "config"});
  EXPECT_NE(r.out.find("\nAccountingStorageEnforce = associations\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nMaxJobCount             = 3\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nMaxSubmitJobs           = 2\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nLockstepMaxNameLength   = 1024\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nLockstepMaxEnvSize      = 2097152\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(",max_script_size=4194304,max_switch_wait=300\n"), std::string::npos)
      << r.out;

  const unsigned long long a = Submit(c, {"-H", "--wrap", "true"});
  const unsigned long long b = Submit(c, {"-H", "--wrap", "true"});
  ASSERT_GT(a, 0u);
  ASSERT_GT(b, 0u);
  // Two pending: the user's limit.
  r = c.Run({"sbatch", "-H", "--wrap", "true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job "
            "submit limit, user's size and/or time limits): the cluster's MaxSubmitJobs "
            "(scheduler.max_submit_jobs) allows 2 job(s) pending or running for user " +
                Me() + ", who has 2\n");
  EXPECT_EQ(JobCount(c), 2u);
  // A cancelled job no longer counts for the user, but lockstepd still holds it: room for one.
  EXPECT_EQ(c.Run({"scancel", std::to_string(a)}).exit_code, 0);
  ASSERT_GT(Submit(c, {"-H", "--wrap", "true"}), 0u);
  EXPECT_EQ(c.Run({"scancel", std::to_string(b)}).exit_code, 0);
  r = c.Run({"sbatch", "-H", "--wrap", "true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "sbatch: error: Batch job submission failed: Slurm temporarily unable to accept job: "
            "MaxJobCount=3 jobs are held by lockstepd (finished ones until they are purged)\n");
  r = c.Run({"srun", "true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("MaxJobCount=3"), std::string::npos) << r.err;
  EXPECT_EQ(JobCount(c), 3u);
}

}  // namespace
}  // namespace lockstep::testing
