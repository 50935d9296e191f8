// Heterogeneous jobs over a real Controller, store and clock: components submitted as one and
// started together, the leader's environment describing them all, steps across components,
// scancel's rules, an end that takes them all, and a restart of lockstepd in between.
#include <gtest/gtest.h>

#include <set>

#include "controller/controller_test_util.h"

namespace lockstep::controller {
namespace {

using testing::ControllerTest;

class HetTest : public ControllerTest {
 protected:
  void SetUp() override {
    ControllerTest::SetUp();
    if (HasFatalFailure()) return;
    backend_.steps = true;
    controller_->AttachBackend(&backend_);
    Report(testing::Nodes(3, 8));
  }

  // A leader of one node with 8 CPUs, and a component of two nodes with 4 CPUs each.
  jobspec::JobSpec HetSpec() {
    jobspec::JobSpec leader = Spec(8);
    leader.name = "lead";
    jobspec::JobSpec other = Spec(4);
    other.name = "other";
    other.script.clear();
    other.min_nodes = other.max_nodes = 2;
    other.ntasks = 2;
    leader.het_components.push_back(other);
    return leader;
  }

  void Passes() {
    controller_->PassForTest();
    controller_->PassForTest();
  }

  void End(JobId id, int exit_code) {
    controller_->events().RunExited({id, 0}, {exit_code, 0, false});
    controller_->SettleForTest();
  }

  const backend::LaunchOrder* LaunchOf(JobId id) {
    launches_ = backend_.Launches();
    for (const backend::LaunchOrder& l : launches_)
      if (l.job == id) return &l;
    return nullptr;
  }

  std::vector<backend::LaunchOrder> launches_;
};

TEST_F(HetTest, ComponentsWaitForEachOtherStartTogetherAndEndWithTheLeader) {
  Result<JobId> blocker = controller_->Submit(kAlice, Spec(8));
  ASSERT_TRUE(blocker.ok());
  Passes();
  Result<JobId> het = controller_->Submit(kAlice, HetSpec());
  ASSERT_TRUE(het.ok()) << het.status().ToString();
  Passes();
  // The leader alone would fit on a free node; the other component needs room on two nodes
  // beside it: neither starts.
  EXPECT_EQ(Field(*het, "state"), "PENDING");
  EXPECT_EQ(Field(*het + 1, "state"), "PENDING");
  Result<nlohmann::json> shown = controller_->ShowJob(*het + 1);
  ASSERT_TRUE(shown.ok());
  EXPECT_EQ((*shown)["het_job_id"], *het);
  EXPECT_EQ((*shown)["het_job_offset"], 1);
  EXPECT_EQ((*shown)["het_job_id_set"],
            std::to_string(*het) + "-" + std::to_string(*het + 1));
  EXPECT_EQ((*shown)["name"], "other");

  End(*blocker, 0);
  Passes();
  EXPECT_EQ(Field(*het, "state"), "RUNNING");
  EXPECT_EQ(Field(*het + 1, "state"), "RUNNING");
  EXPECT_EQ(LaunchOf(*het + 1), nullptr) << "only the leader runs a script";
  const backend::LaunchOrder* lead = LaunchOf(*het);
  ASSERT_NE(lead, nullptr);
  const std::string other = std::to_string(*het + 1);
  EXPECT_EQ(lead->env.at("SLURM_JOB_ID"), std::to_string(*het));
  EXPECT_EQ(lead->env.at("SLURM_HET_SIZE"), "2");
  EXPECT_EQ(lead->env.at("SLURM_JOB_ID_HET_GROUP_1"), other);
  EXPECT_EQ(lead->env.at("SLURM_JOBID_PACK_GROUP_1"), other);
  EXPECT_EQ(lead->env.at("SLURM_JOB_NUM_NODES_HET_GROUP_1"), "2");
  EXPECT_EQ(lead->env.at("SLURM_JOB_NAME_HET_GROUP_1"), "other");
  EXPECT_EQ(lead->env.at("SLURM_JOB_NUM_NODES"), "1") << "the plain variables are the leader's";

  End(*het, 3);
  EXPECT_EQ(Field(*het, "state"), "FAILED");
  EXPECT_EQ(Field(*het + 1, "state"), "FAILED") << "the components end as the leader did";
}

TEST_F(HetTest, OnlyTheWholeJobIsCancelledWhilePendingAndAComponentAloneOnceRunning) {
  Result<JobId> blocker = controller_->Submit(kAlice, Spec(8));
  ASSERT_TRUE(blocker.ok());
  Passes();
  Result<JobId> het = controller_->Submit(kAlice, HetSpec());
  ASSERT_TRUE(het.ok()) << het.status().ToString();
  Status one = controller_->Cancel(kAlice, *het + 1, 0, Controller::SignalTarget::kFull);
  EXPECT_EQ(one.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(one.message(), "Operation not permitted on individual component of heterogeneous job");
  EXPECT_EQ(Field(*het + 1, "state"), "PENDING");
  End(*blocker, 0);
  Passes();
  ASSERT_EQ(Field(*het + 1, "state"), "RUNNING");
  ASSERT_TRUE(controller_->Cancel(kAlice, *het + 1, 0, Controller::SignalTarget::kFull).ok());
  EXPECT_EQ(Field(*het + 1, "state"), "CANCELLED") << "nothing runs there: it ends at once";
  EXPECT_EQ(Field(*het, "state"), "RUNNING");

  jobspec::JobSpec held = HetSpec();
  held.hold = true;  // pending for sure
  Result<JobId> second = controller_->Submit(kAlice, held);
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(controller_->Cancel(kAlice, *second, 0, Controller::SignalTarget::kFull).ok());
  EXPECT_EQ(Field(*second, "state"), "CANCELLED");
  EXPECT_EQ(Field(*second + 1, "state"), "CANCELLED") << "the leader's cancel takes them all";
  EXPECT_EQ(controller_->Requeue(kAlice, *het + 1).message(), "Job not heterogeneous job leader");
}

TEST_F(HetTest, StepsRunOnTheChosenComponentsWithTheLeadersId) {
  Result<JobId> het = controller_->Submit(kAlice, HetSpec());
  ASSERT_TRUE(het.ok()) << het.status().ToString();
  Passes();
  ASSERT_EQ(Field(*het, "state"), "RUNNING");
  Result<nlohmann::json> both = controller_->CreateStep(
      kAlice, *het, {{"argv", {"hostname"}}, {"het_groups", {0, 1}}});
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ((*both)["ntasks"], 3) << "each component's own tasks: 1 and 2";
  EXPECT_EQ((*both)["nodes"].size(), 3u);
  Result<nlohmann::json> other = controller_->CreateStep(
      kAlice, *het, {{"argv", {"hostname"}}, {"het_groups", {1}}});
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_EQ((*other)["ntasks"], 2);
  controller_->SettleForTest();  // the dispatcher has sent the launches
  std::vector<backend::StepLaunch> launched;
  {
    std::lock_guard<std::mutex> lock(backend_.mu_);
    launched = backend_.step_launches;
  }
  ASSERT_EQ(launched.size(), 2u);
  for (const auto& [node, tasks] : launched[1].tasks_by_node) {
    for (const backend::StepTask& t : tasks) {
      EXPECT_EQ(t.env.at("SLURM_JOB_ID"), std::to_string(*het)) << "the leader's id";
      EXPECT_EQ(t.env.at("SLURM_JOB_NAME"), "other") << "the component's name";
      EXPECT_EQ(t.env.at("SLURM_JOB_NUM_NODES"), "2");
    }
  }
  EXPECT_EQ(launched[1].job, *het) << "a step of the leader, which its end ends";

  // srun A : B: each component runs its own command.
  Result<nlohmann::json> mpmd = controller_->CreateStep(
      kAlice, *het,
      {{"argv", {"a"}},
       {"het_parts", {{{"ntasks", 1}, {"argv", {"a"}}}, {{"ntasks", 1}, {"argv", {"b"}}}}}});
  ASSERT_TRUE(mpmd.ok()) << mpmd.status().ToString();
  EXPECT_EQ((*mpmd)["ntasks"], 2);
  controller_->SettleForTest();
  {
    std::lock_guard<std::mutex> lock(backend_.mu_);
    launched = backend_.step_launches;
  }
  std::set<std::string> commands;
  for (const auto& [node, tasks] : launched.back().tasks_by_node)
    for (const backend::StepTask& t : tasks) commands.insert(t.argv.front());
  EXPECT_EQ(commands, (std::set<std::string>{"a", "b"}));

  Result<nlohmann::json> beyond = controller_->CreateStep(
      kAlice, *het, {{"argv", {"hostname"}}, {"het_groups", {2}}});
  ASSERT_FALSE(beyond.ok());
  EXPECT_EQ(beyond.status().message(),
            "Requested het-group offset exceeds highest hetjob index (2 > 1)");
}

TEST_F(HetTest, SuspendAndResumeOfTheLeaderActOnEveryComponent) {
  Result<JobId> het = controller_->Submit(kAlice, HetSpec());
  ASSERT_TRUE(het.ok()) << het.status().ToString();
  Passes();
  ASSERT_EQ(Field(*het + 1, "state"), "RUNNING");
  EXPECT_EQ(controller_->Suspend(kRoot, *het + 1).message(),
            "Operation not permitted on individual component of heterogeneous job");
  ASSERT_TRUE(controller_->Suspend(kRoot, *het).ok());
  EXPECT_EQ(Field(*het, "state"), "SUSPENDED");
  EXPECT_EQ(Field(*het + 1, "state"), "SUSPENDED");
  ASSERT_TRUE(controller_->Resume(kRoot, *het).ok());
  EXPECT_EQ(Field(*het, "state"), "RUNNING");
  EXPECT_EQ(Field(*het + 1, "state"), "RUNNING");
  controller_->SettleForTest();
  std::lock_guard<std::mutex> lock(backend_.mu_);
  // One command each way, to the leader's run, which holds the steps on every component's nodes.
  EXPECT_EQ(backend_.commands,
            (std::vector<std::string>{"suspend " + std::to_string(*het),
                                      "resume " + std::to_string(*het)}));
}

TEST_F(HetTest, ComponentsAndTheirTiesSurviveARestart) {
  Result<JobId> het = controller_->Submit(kAlice, HetSpec());
  ASSERT_TRUE(het.ok()) << het.status().ToString();
  Passes();
  ASSERT_EQ(Field(*het + 1, "state"), "RUNNING");
  Stop();
  Start();
  Report(testing::Nodes(3, 8));
  // The agents still run the leader's run; the other component has none, and is not lost.
  controller_->events().RunsAlive({}, {{*het, 0}});
  controller_->SettleForTest();
  EXPECT_EQ(Field(*het, "state"), "RUNNING");
  EXPECT_EQ(Field(*het + 1, "state"), "RUNNING");
  Result<nlohmann::json> shown = controller_->ShowJob(*het + 1);
  ASSERT_TRUE(shown.ok());
  EXPECT_EQ((*shown)["het_job_offset"], 1);
  End(*het, 0);
  EXPECT_EQ(Field(*het + 1, "state"), "COMPLETED");
}

TEST_F(HetTest, ABadComponentRefusesTheWholeJob) {
  jobspec::JobSpec spec = HetSpec();
  spec.het_components[0].partition = "nope";
  Result<JobId> refused = controller_->Submit(kAlice, spec);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("heterogeneous job component 1"), std::string::npos)
      << refused.status().message();
  nlohmann::json all = controller_->ListJobs({{"all", "1"}});
  EXPECT_TRUE(all["jobs"].empty()) << "nothing of it was queued";
}

}  // namespace
}  // namespace lockstep::controller
