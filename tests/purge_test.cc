// End to end (issue 27): a finished job leaves lockstepd's memory MinJobAge after it ends, as
// slurmctld purges it. squeue and scontrol show job then answer as Slurm's do (Invalid job id
// specified), while sacct, dependencies, `lockstep why` and a restart of lockstepd read it from
// the store. MinJobAge is 1 s here; the test waits on conditions, never a fixed time.
#include <gtest/gtest.h>

#include <chrono>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

constexpr auto kPurgeWait = std::chrono::seconds(30);

class PurgeTest : public ::testing::Test {
 protected:
  PurgeTest() : cluster_(Options()) {}
  static ClusterOptions Options() {
    ClusterOptions o;
    o.extra_yaml = "scheduler:\n  min_job_age: 1\n";
    return o;
  }
  // Runs `--wrap text` to its end; its id.
  unsigned long long RunToEnd(const std::string& text) {
    unsigned long long id = Submit(cluster_, {"--wrap", text});
    EXPECT_GT(id, 0u);
    cluster_.WaitJob(id);
    return id;
  }
  // Waits until `scontrol show job` no longer knows the job.
  bool WaitPurged(unsigned long long id) {
    return WaitFor(
        [&] {
          return cluster_.Run({"scontrol", "show", "job", std::to_string(id)}).exit_code != 0;
        },
        kPurgeWait);
  }
  // sacct's state of the job (its allocation line), "" when sacct does not list it.
  std::string SacctState(unsigned long long id) {
    CommandResult r =
        cluster_.Run({"sacct", "-j", std::to_string(id), "-X", "-n", "-P", "-o", "JobID,State"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::string prefix = std::to_string(id) + "|";
    std::size_t at = r.out.find(prefix);
    if (at == std::string::npos) return "";
    std::size_t end = r.out.find('\n', at);
    return r.out.substr(at + prefix.size(), end - at - prefix.size());
  }

  Cluster cluster_;
};

TEST_F(PurgeTest, AJobPastMinJobAgeIsGoneFromSqueueButSacctAndWhyShowIt) {
  ASSERT_TRUE(cluster_.Start());
  const unsigned long long id = RunToEnd("true");
  ASSERT_TRUE(WaitPurged(id));
  CommandResult show = cluster_.Run({"scontrol", "show", "job", std::to_string(id)});
  EXPECT_EQ(show.exit_code, 1);
  EXPECT_EQ(show.err, "slurm_load_jobs error: Invalid job id specified\n");  // Slurm 22.05's
  CommandResult squeue = cluster_.Run({"squeue", "-j", std::to_string(id)});
  EXPECT_EQ(squeue.exit_code, 1);
  EXPECT_TRUE(Contains(squeue.err, "slurm_load_jobs error: Invalid job id specified"))
      << squeue.err;
  EXPECT_TRUE(cluster_.Get("/api/v1/jobs?all=1")["jobs"].empty());
  EXPECT_EQ(SacctState(id), "COMPLETED");
  CommandResult why = cluster_.Run({"why", std::to_string(id)});
  EXPECT_EQ(why.exit_code, 0) << why.err;
  EXPECT_TRUE(Contains(why.out, "COMPLETED")) << why.out;
}

TEST_F(PurgeTest, DependenciesOnPurgedJobsResolveAsTheyEnded) {
  ASSERT_TRUE(cluster_.Start());
  const unsigned long long ok = RunToEnd("true");
  const unsigned long long failed = RunToEnd("exit 3");
  ASSERT_TRUE(WaitPurged(ok));
  ASSERT_TRUE(WaitPurged(failed));
  const unsigned long long runs =
      Submit(cluster_, {"--dependency=afterok:" + std::to_string(ok), "--wrap", "true"});
  const unsigned long long never =
      Submit(cluster_, {"--dependency=afterok:" + std::to_string(failed), "--wrap", "true"});
  ASSERT_GT(runs, 0u);
  ASSERT_GT(never, 0u);
  EXPECT_EQ(cluster_.WaitJob(runs)["state"], "COMPLETED");
  EXPECT_TRUE(WaitFor([&] { return cluster_.Job(never)["reason"] == "DependencyNeverSatisfied"; },
                      std::chrono::seconds(20)));
}

TEST_F(PurgeTest, ARestartDoesNotBringAPurgedJobBackAndSacctStillHasIt) {
  ASSERT_TRUE(cluster_.Start());
  const unsigned long long id = RunToEnd("true");
  ASSERT_TRUE(WaitPurged(id));
  cluster_.KillDaemon();
  cluster_.StartDaemon();
  ASSERT_TRUE(cluster_.WaitNodes("idle", 2));
  CommandResult show = cluster_.Run({"scontrol", "show", "job", std::to_string(id)});
  EXPECT_EQ(show.exit_code, 1) << show.out;
  EXPECT_EQ(SacctState(id), "COMPLETED");
  const unsigned long long next = Submit(cluster_, {"--wrap", "true"});
  EXPECT_GT(next, id) << "ids are never given again";
}

}  // namespace
}  // namespace lockstep::testing
