// scontrol update of a whole array over a real Controller and store (controller_update.cc): the
// array's id changes every task not finished (running, pending split off, and the tasks still in
// the array's one record, which start with the new values), checked for every task before any
// changes, in one durable write that a restart of lockstepd keeps.
#include <gtest/gtest.h>

#include <numeric>

#include "controller/controller_test_util.h"

namespace lockstep::controller {
namespace {

using testing::ControllerTest;

class ArrayUpdateTest : public ControllerTest {
 protected:
  void SetUp() override {
    ControllerTest::SetUp();
    if (HasFatalFailure()) return;
    Report(testing::Nodes(2, 8));
  }

  // --array=0-(count-1) -t 10: one-node tasks that each take a whole 8-CPU node.
  JobId SubmitArray(std::uint32_t count) {
    jobspec::JobSpec s = Spec(8);
    s.time_limit = 600;
    jobspec::ArraySpec& a = s.array.emplace();
    a.indices.resize(count);
    std::iota(a.indices.begin(), a.indices.end(), 0u);
    a.text = "0-" + std::to_string(count - 1);
    Result<JobId> id = controller_->Submit(kAlice, std::move(s));
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    controller_->PassForTest();
    controller_->PassForTest();
    return id.ok() ? *id : 0;
  }

  nlohmann::json Job(JobId id) {
    Result<nlohmann::json> j = controller_->ShowJob(id);
    return j.ok() ? *j : nlohmann::json();
  }

  // The array's record of tasks not split off, as squeue gets it.
  nlohmann::json Rest(JobId array) {
    const nlohmann::json all = controller_->ListJobs({{"all", "1"}});
    for (const nlohmann::json& j : all["jobs"])
      if (j.value("array_rest", false) && j["job_id"] == array) return j;
    return nullptr;
  }

  void EndRunningTasks() {
    const nlohmann::json running = controller_->ListJobs({{"state", "RUNNING"}});
    for (const nlohmann::json& j : running["jobs"])
      controller_->events().RunExited({j["job_id"].get<JobId>(), 0}, {0, 0, false});
    controller_->SettleForTest();
    controller_->PassForTest();
    controller_->PassForTest();
  }
};

TEST_F(ArrayUpdateTest, TheArraysIdChangesEveryTaskAndTheRestStartsWithTheNewValues) {
  const JobId array = SubmitArray(10);
  ASSERT_EQ(Job(array)["state"], "RUNNING");
  ASSERT_EQ(Job(array + 1)["state"], "RUNNING");
  ASSERT_TRUE(Rest(array).is_object());

  // TimeLimit=-1 (each task's own limit moved), Nice=5, JobName=renamed: one request.
  Status s = controller_->Update(kAlice, array,
                                 {{"time_limit_add", -60}, {"nice", 5}, {"name", "renamed"}});
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (JobId id : {array, array + 1}) {  // running
    EXPECT_EQ(Job(id)["time_limit"], 540) << id;
    EXPECT_EQ(Job(id)["name"], "renamed") << id;
    EXPECT_EQ(Job(id)["nice"], 5) << id;
  }
  EXPECT_EQ(Rest(array)["name"], "renamed");
  EXPECT_EQ(Rest(array)["time_limit"], 540);

  // Durable: lockstepd restarts, and the tasks not split off yet start with the new values.
  Stop();
  Start();
  Report(testing::Nodes(2, 8));
  EXPECT_EQ(Rest(array)["name"], "renamed");
  EXPECT_EQ(Job(array)["time_limit"], 540);
  EndRunningTasks();
  for (JobId id : {array + 2, array + 3}) {
    EXPECT_EQ(Job(id)["state"], "RUNNING") << id;
    EXPECT_EQ(Job(id)["time_limit"], 540) << id;
    EXPECT_EQ(Job(id)["name"], "renamed") << id;
  }

  // One more move: each task from its own limit, the finished ones left as they ended.
  ASSERT_TRUE(controller_->Update(kAlice, array, {{"time_limit_add", -120}}).ok());
  EXPECT_EQ(Job(array)["state"], "COMPLETED");
  EXPECT_EQ(Job(array)["time_limit"], 540) << "a finished task is not changed";
  EXPECT_EQ(Job(array + 2)["time_limit"], 420);
  EXPECT_EQ(Rest(array)["time_limit"], 420);
}

TEST_F(ArrayUpdateTest, OneTaskRefusedRefusesTheWholeUpdateAndChangesNothing) {
  const JobId array = SubmitArray(6);
  // Task 3 alone gets a lower limit (by its own id, as "40_3" names it).
  ASSERT_TRUE(controller_->UpdateTask(kAlice, array + 3, {{"time_limit", 300}}).ok());
  EXPECT_EQ(Job(array + 3)["time_limit"], 300);
  EXPECT_EQ(Job(array + 2)["time_limit"], 600) << "only that task";
  // Setting 450 everywhere would raise task 3's limit: a user may not, so nothing changes.
  Status s = controller_->Update(kAlice, array, {{"time_limit", 450}, {"name", "x"}});
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_NE(s.message().find(std::to_string(array) + "_3"), std::string::npos) << s.message();
  for (JobId id = array; id < array + 4; ++id) EXPECT_EQ(Job(id)["name"], "j") << id;
  EXPECT_EQ(Rest(array)["name"], "j");
  EXPECT_EQ(Job(array)["time_limit"], 600);
  // An operator may; a priority is the operator's alone.
  EXPECT_EQ(controller_->Update(kAlice, array, {{"priority", 9u}}).code(),
            StatusCode::kPermissionDenied);
  ASSERT_TRUE(controller_->Update(kRoot, array, {{"time_limit", 450}, {"priority", 9u}}).ok());
  EXPECT_EQ(Job(array + 3)["time_limit"], 450);
  EXPECT_EQ(Rest(array)["time_limit"], 450);
  // Another user may not touch the array at all.
  const Caller bob{1001, 1001, "bob"};
  EXPECT_EQ(controller_->Update(bob, array, {{"name", "mine"}}).code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(Rest(array)["name"], "j");
  // A decrement larger than a task's limit is refused, naming the task.
  s = controller_->Update(kRoot, array, {{"time_limit_add", -450}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_EQ(Job(array)["time_limit"], 450);
}

TEST_F(ArrayUpdateTest, AnArrayWhoseTasksAllEndedCannotBeUpdated) {
  const JobId array = SubmitArray(2);
  EndRunningTasks();
  ASSERT_EQ(Job(array + 1)["state"], "COMPLETED");
  Status s = controller_->Update(kAlice, array, {{"name", "late"}});
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_EQ(controller_->UpdateTask(kAlice, array + 1, {{"name", "late"}}).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(Job(array)["name"], "j");
}

}  // namespace
}  // namespace lockstep::controller
