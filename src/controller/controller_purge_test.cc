// Finished jobs leave the controller's memory MinJobAge (300 s here) after they end, as
// slurmctld purges them: squeue and scontrol show job no longer know them, while sacct,
// dependencies, `lockstep why` and a restart read them from the store. Time is the ManualClock.
#include <gtest/gtest.h>

#include <chrono>

#include "controller/controller_test_util.h"

namespace lockstep::controller {
namespace {

using testing::ControllerTest;

class PurgeTest : public ControllerTest {
 protected:
  void SetUp() override {
    ControllerTest::SetUp();
    if (HasFatalFailure()) return;
    Report(testing::Nodes(4, 8));
  }

  // A job run to its end with `exit_code`.
  JobId RunToEnd(int exit_code) {
    Result<JobId> id = controller_->Submit(kAlice, Spec());
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    controller_->PassForTest();
    controller_->events().RunExited({*id, 0}, {exit_code, 0, false});
    controller_->SettleForTest();
    return *id;
  }
  // Past MinJobAge (300 s, the default) and one pass, which purges.
  void PassMinJobAge() {
    clock_.Advance(std::chrono::seconds(301));
    controller_->PassForTest();
  }
  bool InMemory(JobId id) { return controller_->ShowJob(id).ok(); }
  std::vector<JobId> Listed(const nlohmann::json& jobs) {
    std::vector<JobId> ids;
    for (const nlohmann::json& j : jobs["jobs"]) ids.push_back(j.value("job_id", JobId{0}));
    return ids;
  }
  std::string AccountedState(JobId id) {
    const nlohmann::json accounted = controller_->Accounting({});
    for (const nlohmann::json& j : accounted["jobs"])
      if (j.value("job_id", JobId{0}) == id) return j.value("state", "");
    return "";
  }
  JobId SubmitAfter(jobspec::DependencyType type, JobId target, bool hold = false) {
    jobspec::JobSpec s = Spec();
    s.dependencies.push_back({type, target});
    s.hold = hold;
    Result<JobId> id = controller_->Submit(kAlice, s);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }
};

TEST_F(PurgeTest, AJobPastMinJobAgeIsGoneFromSqueueAndMemoryButSacctShowsIt) {
  const JobId done = RunToEnd(0);
  clock_.Advance(std::chrono::seconds(299));
  controller_->PassForTest();
  ASSERT_TRUE(InMemory(done)) << "within MinJobAge";
  EXPECT_EQ(Listed(controller_->ListJobs({{"all", "1"}})), std::vector<JobId>{done});

  PassMinJobAge();
  Result<nlohmann::json> shown = controller_->ShowJob(done);
  ASSERT_FALSE(shown.ok());
  EXPECT_EQ(shown.status().code(), StatusCode::kNotFound);  // scontrol: Invalid job id specified
  EXPECT_TRUE(Listed(controller_->ListJobs({{"all", "1"}})).empty());
  EXPECT_EQ(AccountedState(done), "COMPLETED");
  EXPECT_EQ(Listed(controller_->Accounting({{"job", std::to_string(done)}})),
            std::vector<JobId>{done});
  Result<nlohmann::json> why = controller_->Why(done);
  ASSERT_TRUE(why.ok()) << why.status().ToString();
  EXPECT_EQ((*why).value("state", ""), "COMPLETED");
  Result<nlohmann::json> record = controller_->JobRecord(done);
  ASSERT_TRUE(record.ok());
  EXPECT_EQ((*record).value("user", ""), "alice");
  EXPECT_FALSE(controller_->Cancel(kAlice, done, 0).ok());
}

TEST_F(PurgeTest, SacctMergesPurgedAndLiveJobsInIdOrderOnce) {
  const JobId old = RunToEnd(1);
  PassMinJobAge();
  Result<JobId> live = controller_->Submit(kAlice, Spec());
  ASSERT_TRUE(live.ok());
  controller_->PassForTest();
  EXPECT_EQ(Listed(controller_->Accounting({})), (std::vector<JobId>{old, *live}));
  EXPECT_EQ(AccountedState(old), "FAILED");
  EXPECT_EQ(AccountedState(*live), "RUNNING");
  EXPECT_TRUE(Listed(controller_->Accounting({{"user", "bob"}})).empty());
  EXPECT_EQ(Listed(controller_->Accounting({{"user", "alice"}})), (std::vector<JobId>{old, *live}));
}

TEST_F(PurgeTest, ADependencyOnAPurgedJobResolvesAsItEnded) {
  const JobId ok = RunToEnd(0);
  const JobId failed = RunToEnd(2);
  // Submitted before the purge, held: it waits through it, and is released after.
  const JobId waited = SubmitAfter(jobspec::DependencyType::kAfterOk, ok, /*hold=*/true);
  PassMinJobAge();
  ASSERT_FALSE(InMemory(ok));
  ASSERT_FALSE(InMemory(failed));

  const JobId runs = SubmitAfter(jobspec::DependencyType::kAfterOk, ok);
  const JobId never = SubmitAfter(jobspec::DependencyType::kAfterOk, failed);
  const JobId not_ok = SubmitAfter(jobspec::DependencyType::kAfterNotOk, failed);
  ASSERT_TRUE(controller_->Release(kAlice, waited).ok());
  controller_->PassForTest();
  EXPECT_EQ(Field(runs, "state"), "RUNNING");
  EXPECT_EQ(Field(never, "reason"), "DependencyNeverSatisfied");
  EXPECT_EQ(Field(not_ok, "state"), "RUNNING");
  EXPECT_EQ(Field(waited, "state"), "RUNNING");
  jobspec::JobSpec unknown = Spec();
  unknown.dependencies.push_back({jobspec::DependencyType::kAfterOk, 999});
  EXPECT_FALSE(controller_->Submit(kAlice, unknown).ok()) << "never submitted";
}

TEST_F(PurgeTest, ARestartDoesNotBringAPurgedJobBack) {
  const JobId ok = RunToEnd(0);
  const JobId waited = SubmitAfter(jobspec::DependencyType::kAfterOk, ok, /*hold=*/true);
  clock_.Advance(std::chrono::seconds(200));
  const JobId recent = RunToEnd(0);
  clock_.Advance(std::chrono::seconds(101));  // `ok` ended 301 s ago, `recent` 101 s ago
  Stop();
  Start();
  EXPECT_FALSE(InMemory(ok)) << "loaded back";
  EXPECT_TRUE(InMemory(recent)) << "within MinJobAge";
  EXPECT_EQ(AccountedState(ok), "COMPLETED");
  Report(testing::Nodes(4, 8));
  ASSERT_TRUE(controller_->Release(kAlice, waited).ok());
  controller_->PassForTest();
  EXPECT_EQ(Field(waited, "state"), "RUNNING") << "its purged afterok target completed";
}

TEST_F(PurgeTest, ARestartKeepsAJobThatEndedWithinMinJobAge) {
  const JobId done = RunToEnd(0);
  clock_.Advance(std::chrono::seconds(100));
  Stop();
  Start();
  EXPECT_TRUE(InMemory(done));
  EXPECT_EQ(Field(done, "state"), "COMPLETED");
  clock_.Advance(std::chrono::seconds(201));
  controller_->PassForTest();
  EXPECT_FALSE(InMemory(done)) << "purged once MinJobAge has passed since its end";
  EXPECT_EQ(AccountedState(done), "COMPLETED");
}

TEST_F(PurgeTest, TheHighestIdPurgedIsNotGivenAgainAfterARestart) {
  const JobId last = RunToEnd(0);
  PassMinJobAge();
  Stop();
  Start();
  Report(testing::Nodes(4, 8));
  Result<JobId> next = controller_->Submit(kAlice, Spec());
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, last + 1);
}

}  // namespace
}  // namespace lockstep::controller
