// scontrol requeuehold over a real Controller and store: the job is requeued and held in one
// change, so no scheduling pass starts it again (nodes free all along) until it is released,
// and the hold outlives a restart of lockstepd; a plain requeue, by contrast, starts at once.
#include <gtest/gtest.h>

#include "controller/controller_test_util.h"

namespace lockstep::controller {
namespace {

using testing::ControllerTest;

class RequeueHoldTest : public ControllerTest {
 protected:
  void SetUp() override {
    ControllerTest::SetUp();
    if (HasFatalFailure()) return;
    Report(testing::Nodes(2, 8));
  }
  std::size_t Launches() { return backend_.Launches().size(); }
};

TEST_F(RequeueHoldTest, ARequeueheldJobNeverStartsUntilReleasedAndTheHoldIsDurable) {
  Result<JobId> id = controller_->Submit(kAlice, Spec(8));
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  controller_->PassForTest();
  ASSERT_EQ(Field(*id, "state"), "RUNNING");
  ASSERT_EQ(Launches(), 1u);

  Status s = controller_->RequeueHold(kAlice, *id);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Field(*id, "state"), "PENDING");
  EXPECT_EQ(Field(*id, "reason"), "job requeued in held state");
  // Passes with both nodes free: it does not start.
  for (int i = 0; i < 3; ++i) controller_->PassForTest();
  EXPECT_EQ(Launches(), 1u);
  EXPECT_EQ(Field(*id, "state"), "PENDING");

  // The requeue and the hold are one durable record.
  Stop();
  Start();
  Report(testing::Nodes(2, 8));
  controller_->PassForTest();
  EXPECT_EQ(Launches(), 1u);
  EXPECT_EQ(Field(*id, "state"), "PENDING");
  EXPECT_EQ(Field(*id, "reason"), "job requeued in held state");
  Result<nlohmann::json> job = controller_->ShowJob(*id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ((*job)["restart_count"], 1);

  // Released, it starts again; a plain requeue of it then starts it at once.
  ASSERT_TRUE(controller_->Release(kAlice, *id).ok());
  controller_->PassForTest();
  EXPECT_EQ(Launches(), 2u);
  ASSERT_TRUE(controller_->Requeue(kAlice, *id).ok());
  controller_->PassForTest();
  EXPECT_EQ(Launches(), 3u);
  EXPECT_EQ(Field(*id, "state"), "RUNNING");
}

TEST_F(RequeueHoldTest, SpecialExitShowsUntilReleasedAndOnlyRunningJobsAreRequeued) {
  Result<JobId> id = controller_->Submit(kAlice, Spec(8));
  ASSERT_TRUE(id.ok());
  controller_->PassForTest();
  ASSERT_TRUE(controller_->RequeueHold(kAlice, *id, /*special_exit=*/true).ok());
  EXPECT_EQ(Field(*id, "state"), "SPECIAL_EXIT");
  EXPECT_EQ(controller_->ListJobs({{"state", "SPECIAL_EXIT"}})["jobs"].size(), 1u);
  EXPECT_EQ(controller_->ListJobs({{"state", "PENDING"}})["jobs"].size(), 0u);
  // Not running any more: another requeuehold is refused and changes nothing.
  EXPECT_EQ(controller_->RequeueHold(kAlice, *id).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(Field(*id, "state"), "SPECIAL_EXIT");
  // Another user may not requeue it.
  const Caller bob{1001, 1001, "bob"};
  Result<JobId> other = controller_->Submit(kAlice, Spec(8));
  ASSERT_TRUE(other.ok());
  controller_->PassForTest();
  ASSERT_EQ(Field(*other, "state"), "RUNNING");
  EXPECT_EQ(controller_->RequeueHold(bob, *other).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(Field(*other, "state"), "RUNNING");
  // Released: an ordinary job again, and it runs.
  ASSERT_TRUE(controller_->Release(kAlice, *id).ok());
  EXPECT_NE(Field(*id, "state"), "SPECIAL_EXIT");
  controller_->PassForTest();
  EXPECT_EQ(Field(*id, "state"), "RUNNING");
}

}  // namespace
}  // namespace lockstep::controller
