// Failure evidence end to end (docs/health.md, "Failure attribution"): a crashed job's core kept
// as the evidence of cause `user`, and the `scheduler` cause of a job the scheduler cancels.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <string>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

class FailureEvidenceTest : public ::testing::Test {
 protected:
  void StartCluster(const std::string& yaml) {
    ClusterOptions o;
    o.nodes = 2;
    o.extra_yaml = yaml;
    cluster_ = std::make_unique<Cluster>(o);
    ASSERT_TRUE(cluster_->Start());
  }
  std::unique_ptr<Cluster> cluster_;
};

// A job whose shell dies of SIGSEGV ends with cause `user`; the evidence names the signal and,
// where the host's kernel.core_pattern writes a file, the core kept in the job's own directory,
// within the configured cap (health.core_dumps.max_size, the tasks' RLIMIT_CORE).
TEST_F(FailureEvidenceTest, ACrashKeepsItsCoreAsEvidence) {
  StartCluster("health:\n  core_dumps: {max_size: 64M}\n");
  unsigned long long id =
      Submit(*cluster_, {"-N1", "--no-requeue", "-o", "job-%j.out", "--wrap",
                         "awk '/core file size/ {print $5, $6}' /proc/$$/limits "
                         "> limit-$SLURM_JOB_ID; kill -SEGV $$"});
  ASSERT_NE(id, 0u);
  nlohmann::json j = cluster_->WaitJob(id, 60);
  EXPECT_EQ(j.value("state", ""), "FAILED") << j.dump();
  ASSERT_TRUE(j["failure"].is_object()) << j.dump();
  EXPECT_EQ(j["failure"]["cause"], "user");
  const std::string detail = j["failure"]["detail"];
  EXPECT_TRUE(Contains(detail, "killed by signal 11 (SIGSEGV)")) << detail;
  // RLIMIT_CORE, soft and hard, in bytes.
  EXPECT_EQ(cluster_->ReadFile("limit-" + std::to_string(id)), "67108864 67108864\n");
  std::ifstream pattern_file("/proc/sys/kernel/core_pattern");
  std::string pattern;
  std::getline(pattern_file, pattern);
  if (!pattern.empty() && pattern[0] == '|') {
    EXPECT_TRUE(Contains(detail, "core dumped, piped to")) << detail;
    return;
  }
  const std::string marker = "core dumped: ";
  ASSERT_TRUE(Contains(detail, marker)) << detail;
  const std::size_t at = detail.find(marker) + marker.size();
  const std::string path = detail.substr(at, detail.find(" (", at) - at);
  if (pattern.rfind('/', 0) != 0)  // relative: written in the job's directory, kept there
    EXPECT_EQ(path.rfind(cluster_->work() + "/cores-" + std::to_string(id) + "/core.", 0), 0u)
        << path;
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0) << path;
  EXPECT_GT(st.st_size, 0);
  EXPECT_LE(st.st_size, 64 << 20);
  EXPECT_TRUE(Contains(detail, "(" + std::to_string(st.st_size) + " bytes)")) << detail;
  CommandResult why = cluster_->Run({"why", std::to_string(id)});
  EXPECT_TRUE(Contains(why.out, path)) << why.out;
}

// With scheduler.kill_invalid_depend, a job whose afterok dependency failed is cancelled by
// the scheduler with cause `scheduler`; without it, it pends with DependencyNeverSatisfied.
TEST_F(FailureEvidenceTest, TheSchedulerCancelsAJobWhoseDependencyCanNeverBeSatisfied) {
  StartCluster("scheduler:\n  kill_invalid_depend: true\n");
  unsigned long long failing = Submit(*cluster_, {"-N1", "--wrap", "exit 3"});
  ASSERT_NE(failing, 0u);
  unsigned long long after = Submit(
      *cluster_, {"-N1", "-d", "afterok:" + std::to_string(failing), "--wrap", "true"});
  ASSERT_NE(after, 0u);
  EXPECT_EQ(cluster_->WaitJob(failing).value("state", ""), "FAILED");
  nlohmann::json j = cluster_->WaitJob(after);
  EXPECT_EQ(j.value("state", ""), "CANCELLED") << j.dump();
  ASSERT_TRUE(j["failure"].is_object()) << j.dump();
  EXPECT_EQ(j["failure"]["cause"], "scheduler");
  EXPECT_TRUE(Contains(j["failure"]["detail"],
                       "dependency on job " + std::to_string(failing) + " can never be satisfied"))
      << j["failure"].dump();
  CommandResult sacct = cluster_->Run({"sacct", "-j", std::to_string(after), "-n", "-P", "-o",
                                       "JobID,State,FailureCause"});
  EXPECT_TRUE(Contains(sacct.out, std::to_string(after) + "|CANCELLED|scheduler"))
      << sacct.out << sacct.err;
}

TEST_F(FailureEvidenceTest, WithoutKillInvalidDependTheJobPends) {
  StartCluster("");
  unsigned long long failing = Submit(*cluster_, {"-N1", "--wrap", "exit 3"});
  ASSERT_NE(failing, 0u);
  unsigned long long after = Submit(
      *cluster_, {"-N1", "-d", "afterok:" + std::to_string(failing), "--wrap", "true"});
  ASSERT_NE(after, 0u);
  EXPECT_EQ(cluster_->WaitJob(failing).value("state", ""), "FAILED");
  EXPECT_TRUE(WaitFor(
      [&] { return cluster_->Job(after).value("reason", "") == "DependencyNeverSatisfied"; },
      std::chrono::seconds(20)));
  nlohmann::json j = cluster_->Job(after);
  EXPECT_EQ(j.value("state", ""), "PENDING");
  EXPECT_TRUE(j["failure"].is_null()) << j.dump();
}

}  // namespace
}  // namespace lockstep::testing
