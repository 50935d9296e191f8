// scontrol suspend and resume in the controller: operators only, Slurm's refusals, the time
// suspended added to the limit (for the time limit and for the engine's expected ends), durable
// across a restart, and scancel of a suspended job resuming it before it ends it.
#include <gtest/gtest.h>

#include "controller/controller_test_util.h"

namespace lockstep::controller {
namespace {

using testing::ControllerTest;

class SuspendTest : public ControllerTest {
 protected:
  void SetUp() override {
    ControllerTest::SetUp();
    if (HasFatalFailure()) return;
    Report(testing::Nodes(2, 8));
  }
  JobId Running(Seconds limit) {
    jobspec::JobSpec s = Spec();
    s.time_limit = limit;
    Result<JobId> id = controller_->Submit(kAlice, s);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    controller_->PassForTest();
    EXPECT_EQ(Field(*id, "state"), "RUNNING");
    return id.ok() ? *id : 0;
  }
  std::vector<std::string> Commands() {
    controller_->SettleForTest();
    std::lock_guard<std::mutex> lock(backend_.mu_);
    return backend_.commands;
  }
  std::int64_t Number(JobId id, const char* field) {
    Result<nlohmann::json> j = controller_->ShowJob(id);
    return j.ok() ? j->value(field, std::int64_t{-1}) : -1;
  }
};

TEST_F(SuspendTest, TheTimeSuspendedIsAddedToTheTimeLimit) {
  const JobId a = Running(60);
  clock_.Advance(std::chrono::seconds(10));
  ASSERT_TRUE(controller_->Suspend(kRoot, a).ok());
  EXPECT_EQ(Field(a, "state"), "SUSPENDED");
  EXPECT_EQ(Commands(), std::vector<std::string>{"suspend " + std::to_string(a)});
  // Far past its limit while suspended: it is not timed out.
  clock_.Advance(std::chrono::seconds(100));
  controller_->PassForTest();
  EXPECT_EQ(Field(a, "state"), "SUSPENDED");
  ASSERT_TRUE(controller_->Resume(kRoot, a).ok());
  EXPECT_EQ(Field(a, "state"), "RUNNING");
  EXPECT_EQ(Number(a, "suspended_seconds"), 100);
  EXPECT_EQ(Number(a, "suspend_time"), 0);
  // 59 s of running time: still within its 60 s.
  clock_.Advance(std::chrono::seconds(49));
  controller_->PassForTest();
  EXPECT_EQ(Field(a, "state"), "RUNNING");
  clock_.Advance(std::chrono::seconds(2));
  controller_->PassForTest();
  EXPECT_EQ(Field(a, "state"), "COMPLETING");
  controller_->events().RunExited({a, 0}, {0, 15, false});
  controller_->SettleForTest();
  EXPECT_EQ(Field(a, "state"), "TIMEOUT");
}

TEST_F(SuspendTest, TheEngineExpectsTheSuspendedJobToEndLater) {
  const Time t0 = clock_.Now();
  const JobId a = Running(60);
  jobspec::JobSpec long_job = Spec();
  long_job.time_limit = 1000;
  Result<JobId> b = controller_->Submit(kAlice, long_job);
  ASSERT_TRUE(b.ok());
  Result<JobId> c = controller_->Submit(kAlice, Spec());  // waits for a's node
  ASSERT_TRUE(c.ok());
  controller_->PassForTest();
  ASSERT_EQ(Field(*c, "state"), "PENDING");
  EXPECT_EQ(Number(*c, "expected_start"), t0 + 60);
  clock_.Advance(std::chrono::seconds(10));
  ASSERT_TRUE(controller_->Suspend(kRoot, a).ok());
  clock_.Advance(std::chrono::seconds(30));
  ASSERT_TRUE(controller_->Resume(kRoot, a).ok());
  controller_->PassForTest();
  // Its resources stayed allocated, and its end moved by the 30 s it was suspended.
  EXPECT_EQ(Field(*c, "state"), "PENDING");
  EXPECT_EQ(Number(*c, "expected_start"), t0 + 90);
}

TEST_F(SuspendTest, RefusalsAreSlurmsAndChangeNothing) {
  const JobId a = Running(60);
  Status s = controller_->Suspend(kAlice, a);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(), "Access/permission denied");
  EXPECT_EQ(controller_->Suspend(kRoot, 999).message(), "Invalid job id specified");
  EXPECT_EQ(controller_->Resume(kRoot, a).message(), "Job is not suspended");
  jobspec::JobSpec held = Spec();
  held.hold = true;
  Result<JobId> p = controller_->Submit(kAlice, held);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(controller_->Suspend(kRoot, *p).message(), "Job is pending execution");
  ASSERT_TRUE(controller_->Suspend(kRoot, a).ok());
  EXPECT_EQ(controller_->Suspend(kRoot, a).message(), "Job is not running");
  EXPECT_EQ(controller_->Resume(kAlice, a).message(), "Access/permission denied");
  EXPECT_EQ(Field(a, "state"), "SUSPENDED");
  EXPECT_EQ(Commands(), std::vector<std::string>{"suspend " + std::to_string(a)});
}

TEST_F(SuspendTest, ASuspendedJobStaysSuspendedAcrossARestart) {
  const JobId a = Running(60);
  clock_.Advance(std::chrono::seconds(5));
  ASSERT_TRUE(controller_->Suspend(kRoot, a).ok());
  const std::int64_t since = Number(a, "suspend_time");
  Stop();
  Start();
  Report(testing::Nodes(2, 8));
  controller_->events().RunsAlive({}, {{a, 0}});
  controller_->PassForTest();
  EXPECT_EQ(Field(a, "state"), "SUSPENDED");
  EXPECT_EQ(Number(a, "suspend_time"), since);
  clock_.Advance(std::chrono::seconds(20));
  ASSERT_TRUE(controller_->Resume(kRoot, a).ok());
  EXPECT_EQ(Number(a, "suspended_seconds"), 20);
  EXPECT_EQ(Field(a, "state"), "RUNNING");
}

TEST_F(SuspendTest, CancellingASuspendedJobResumesItThenEndsIt) {
  const JobId a = Running(60);
  ASSERT_TRUE(controller_->Suspend(kRoot, a).ok());
  ASSERT_TRUE(controller_->Cancel(kAlice, a, 0).ok());
  const std::string id = std::to_string(a);
  EXPECT_EQ(Commands(),
            (std::vector<std::string>{"suspend " + id, "resume " + id, "terminate " + id}));
  EXPECT_EQ(Field(a, "state"), "COMPLETING");
  controller_->events().RunExited({a, 0}, {0, 15, false});
  controller_->SettleForTest();
  EXPECT_EQ(Field(a, "state"), "CANCELLED");
}

}  // namespace
}  // namespace lockstep::controller
