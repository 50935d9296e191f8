// Dependencies over a real Controller, store and clock: aftercorr between two arrays (each task
// after the same task of the other), after:ID+MIN, and both across a restart of lockstepd.
#include <gtest/gtest.h>

#include <numeric>

#include "controller/controller_test_util.h"

namespace lockstep::controller {
namespace {

using testing::ControllerTest;

class DependTest : public ControllerTest {
 protected:
  void SetUp() override {
    ControllerTest::SetUp();
    if (HasFatalFailure()) return;
    Report(testing::Nodes(2, 8));
  }

  // An array of one-node jobs of `cpus` CPUs over `indices`.
  jobspec::JobSpec ArraySpec(std::vector<std::uint32_t> indices, int cpus) {
    jobspec::JobSpec s = Spec(cpus);
    jobspec::ArraySpec& a = s.array.emplace();
    a.indices = std::move(indices);
    for (std::uint32_t i : a.indices) a.text += (a.text.empty() ? "" : ",") + std::to_string(i);
    return s;
  }

  static jobspec::DependencySpec On(jobspec::DependencyType type, JobId job, int delay = 0) {
    jobspec::DependencySpec d;
    d.type = type;
    d.job = job;
    d.delay_minutes = delay;
    return d;
  }

  void End(JobId id, int exit_code) {
    controller_->events().RunExited({id, 0}, {exit_code, 0, false});
    controller_->SettleForTest();
  }

  void Passes() {
    controller_->PassForTest();
    controller_->PassForTest();
  }
};

TEST_F(DependTest, AftercorrTasksWaitEachForTheTaskOfTheSameIndex) {
  // Both nodes busy: the target array's tasks stay pending, most in its one record.
  Result<JobId> blocker1 = controller_->Submit(kAlice, Spec(8));
  Result<JobId> blocker2 = controller_->Submit(kAlice, Spec(8));
  ASSERT_TRUE(blocker1.ok() && blocker2.ok());
  Passes();
  Result<JobId> target = controller_->Submit(kAlice, ArraySpec({0, 1, 2, 3}, 2));
  ASSERT_TRUE(target.ok());
  jobspec::JobSpec dependent = ArraySpec({0, 1, 2, 3, 9}, 1);
  dependent.dependencies.push_back(On(jobspec::DependencyType::kAfterCorr, *target));
  Result<JobId> waits = controller_->Submit(kAlice, dependent);
  ASSERT_TRUE(waits.ok()) << waits.status().ToString();
  Passes();
  // Task k of each array is job id + k; index 9 is the dependent's fifth task.
  for (JobId k = 0; k < 4; ++k) {
    EXPECT_EQ(Field(*waits + k, "state"), "PENDING");
    EXPECT_EQ(Field(*waits + k, "reason"), "Dependency") << "task " << k;
    EXPECT_EQ(Field(*waits + k, "dependency"), "afterok:" + std::to_string(*target + k));
  }
  // The target has no task 9: it waits only for room, behind the target's tasks.
  EXPECT_EQ(Field(*waits + 4, "dependency"), "");
  EXPECT_EQ(Field(*waits + 4, "reason"), "Priority");

  End(*blocker1, 0);
  End(*blocker2, 0);
  Passes();
  for (JobId k = 0; k < 4; ++k) EXPECT_EQ(Field(*target + k, "state"), "RUNNING") << k;
  EXPECT_EQ(Field(*waits + 4, "state"), "RUNNING");
  End(*target + 0, 0);
  End(*target + 1, 1);
  End(*target + 2, 0);
  Passes();
  EXPECT_EQ(Field(*waits + 0, "state"), "RUNNING");
  EXPECT_EQ(Field(*waits + 1, "reason"), "DependencyNeverSatisfied") << "its task failed";
  EXPECT_EQ(Field(*waits + 2, "state"), "RUNNING");
  EXPECT_EQ(Field(*waits + 3, "reason"), "Dependency") << "its task still runs";

  // Restarted, the resolved dependencies are the tasks' own.
  Stop();
  Start();
  Report(testing::Nodes(2, 8));
  Passes();
  EXPECT_EQ(Field(*waits + 3, "dependency"), "afterok:" + std::to_string(*target + 3));
  EXPECT_EQ(Field(*waits + 3, "state"), "PENDING");
}

TEST_F(DependTest, AftercorrOnAJobThatIsNoArrayIsAfterok) {
  Result<JobId> plain = controller_->Submit(kAlice, Spec(1));
  ASSERT_TRUE(plain.ok());
  jobspec::JobSpec dependent = ArraySpec({0, 1}, 1);
  dependent.dependencies.push_back(On(jobspec::DependencyType::kAfterCorr, *plain));
  Result<JobId> waits = controller_->Submit(kAlice, dependent);
  ASSERT_TRUE(waits.ok()) << waits.status().ToString();
  Passes();
  EXPECT_EQ(Field(*waits, "reason"), "Dependency");
  End(*plain, 0);
  Passes();
  EXPECT_EQ(Field(*waits, "state"), "RUNNING");
  EXPECT_EQ(Field(*waits + 1, "state"), "RUNNING");
}

TEST_F(DependTest, AftercorrOnAnArrayThatDoesNotExistIsRefused) {
  jobspec::JobSpec dependent = ArraySpec({0, 1}, 1);
  dependent.dependencies.push_back(On(jobspec::DependencyType::kAfterCorr, 4242));
  Result<JobId> refused = controller_->Submit(kAlice, dependent);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("4242"), std::string::npos)
      << refused.status().ToString();
}

TEST_F(DependTest, AfterWithADelayStartsThatManyMinutesAfterTheTargetStarted) {
  Result<JobId> first = controller_->Submit(kAlice, Spec(1));
  ASSERT_TRUE(first.ok());
  Passes();
  ASSERT_EQ(Field(*first, "state"), "RUNNING");
  jobspec::JobSpec later = Spec(1);
  later.dependencies.push_back(On(jobspec::DependencyType::kAfter, *first, 2));
  Result<JobId> waits = controller_->Submit(kAlice, later);
  ASSERT_TRUE(waits.ok());
  Passes();
  EXPECT_EQ(Field(*waits, "reason"), "Dependency");
  EXPECT_EQ(Field(*waits, "dependency"), "after:" + std::to_string(*first) + "+2");
  clock_.Advance(std::chrono::seconds(119));
  Passes();
  EXPECT_EQ(Field(*waits, "state"), "PENDING") << "119 s of the 120";
  // The target ends meanwhile: the delay still counts from its start.
  End(*first, 0);
  clock_.Advance(std::chrono::seconds(1));
  Passes();
  EXPECT_EQ(Field(*waits, "state"), "RUNNING");
}

TEST_F(DependTest, AfterWithADelayOnAJobCancelledWhilePendingCountsFromTheCancel) {
  jobspec::JobSpec never = Spec(1);
  never.hold = true;
  Result<JobId> held = controller_->Submit(kAlice, never);
  ASSERT_TRUE(held.ok());
  jobspec::JobSpec later = Spec(1);
  later.dependencies.push_back(On(jobspec::DependencyType::kAfter, *held, 1));
  Result<JobId> waits = controller_->Submit(kAlice, later);
  ASSERT_TRUE(waits.ok());
  clock_.Advance(std::chrono::seconds(600));
  Passes();
  EXPECT_EQ(Field(*waits, "reason"), "Dependency") << "its target never started";
  ASSERT_TRUE(controller_->Cancel(kAlice, *held, 0).ok());
  Passes();
  EXPECT_EQ(Field(*waits, "state"), "PENDING") << "a minute from the cancel";
  clock_.Advance(std::chrono::seconds(60));
  Passes();
  EXPECT_EQ(Field(*waits, "state"), "RUNNING");
}

TEST_F(DependTest, MemZeroTakesAWholeNodesMemory) {
  jobspec::JobSpec all = Spec(1);
  all.mem_whole_node = true;
  Result<JobId> whole = controller_->Submit(kAlice, all);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  jobspec::JobSpec some = Spec(1);
  some.mem_mb = 100;
  Result<JobId> beside = controller_->Submit(kAlice, some);
  Result<JobId> second_whole = controller_->Submit(kAlice, all);
  Result<JobId> third_whole = controller_->Submit(kAlice, all);
  ASSERT_TRUE(beside.ok() && second_whole.ok() && third_whole.ok());
  Passes();
  EXPECT_EQ(Field(*whole, "state"), "RUNNING");
  EXPECT_EQ(Field(*beside, "state"), "RUNNING");
  EXPECT_NE(Field(*whole, "nodes"), Field(*beside, "nodes"))
      << "no memory is left beside a --mem=0 job";
  EXPECT_EQ(Field(*second_whole, "state"), "PENDING");
  EXPECT_EQ(Field(*second_whole, "reason"), "Resources");
  bool launched = false;
  for (const backend::LaunchOrder& l : backend_.Launches()) {
    if (l.job != *whole) continue;
    launched = true;
    ASSERT_EQ(l.nodes.size(), 1u);
    EXPECT_EQ(l.nodes[0].mem_mb, 1024) << "the node's whole 1024 MB, for its cgroup";
  }
  EXPECT_TRUE(launched);
}

}  // namespace
}  // namespace lockstep::controller
