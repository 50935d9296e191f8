// srun's long poll on a step's output: a waiter kept by the controller per step, answered by the
// step's output, by its end (its last node's, or its job's), or by its wait's end; refusals and
// reads with no wait are answered at once.
#include <gtest/gtest.h>

#include <future>
#include <memory>

#include "controller/controller_test_util.h"

namespace lockstep::controller {
namespace {

using testing::ControllerTest;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Alice's job of 4 tasks running on two nodes of a backend that runs steps.
class RunningJobTest : public ControllerTest {
 protected:
  void SetUp() override {
    ControllerTest::SetUp();
    if (HasFatalFailure()) return;
    backend_.steps = true;
    controller_->AttachBackend(&backend_);
    Report(testing::Nodes(2, 8));
    Result<JobId> id = controller_->Submit(kAlice, Spec(4));
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    job_ = *id;
    controller_->PassForTest();
    ASSERT_EQ(Field(job_, "state"), "RUNNING");
  }
  JobId job_ = 0;
};

class StepOutputWaitTest : public RunningJobTest {
 protected:

  // A streamed step of one task; its id.
  std::int32_t Step() {
    Result<nlohmann::json> step = controller_->CreateStep(
        kAlice, job_, {{"argv", {"train"}}, {"ntasks", 1}, {"stream", true}});
    EXPECT_TRUE(step.ok()) << step.status().ToString();
    return step.ok() ? (*step)["step_id"].get<std::int32_t>() : -1;
  }

  std::future<Result<nlohmann::json>> Read(std::int32_t step, std::uint64_t offset,
                                           milliseconds wait, const Caller& who) {
    auto answer = std::make_shared<std::promise<Result<nlohmann::json>>>();
    std::future<Result<nlohmann::json>> f = answer->get_future();
    controller_->StepOutput(who, job_, step, offset, wait,
                            [answer](Result<nlohmann::json> j) { answer->set_value(std::move(j)); });
    return f;
  }
  std::future<Result<nlohmann::json>> Read(std::int32_t step, std::uint64_t offset,
                                           milliseconds wait) {
    return Read(step, offset, wait, kAlice);
  }
  static bool Answered(const std::future<Result<nlohmann::json>>& f) {
    return f.wait_for(seconds(0)) == std::future_status::ready;
  }
};

TEST_F(StepOutputWaitTest, AWaitingReadIsAnsweredByTheStepsOutputThenByItsEnd) {
  const std::int32_t step = Step();
  std::future<Result<nlohmann::json>> first = Read(step, 0, seconds(30));
  EXPECT_FALSE(Answered(first)) << "nothing to read yet: it waits";
  controller_->events().StepOutput({{job_, step, 0, false, "hello"}});
  Result<nlohmann::json> out = first.get();  // long before 30 s
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ((*out)["chunks"].size(), 1u);
  EXPECT_EQ((*out)["chunks"][0]["data"], "aGVsbG8=");
  EXPECT_EQ((*out)["offset"], 5);
  EXPECT_EQ((*out)["done"], false);

  std::future<Result<nlohmann::json>> second = Read(step, 5, seconds(30));
  EXPECT_FALSE(Answered(second));
  controller_->events().StepNodeExited(job_, step, backend_.NodeOf(job_), {0, 0, false});
  Result<nlohmann::json> end = second.get();
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_TRUE((*end)["chunks"].empty());
  EXPECT_EQ((*end)["offset"], 5);
  EXPECT_EQ((*end)["done"], true);
}

TEST_F(StepOutputWaitTest, AWaitingReadIsAnsweredWhenTheJobEnds) {
  const std::int32_t step = Step();
  std::future<Result<nlohmann::json>> read = Read(step, 0, seconds(30));
  EXPECT_FALSE(Answered(read));
  controller_->events().RunExited({job_, 0}, {0, 0, false});
  Result<nlohmann::json> end = read.get();
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_EQ((*end)["done"], true);
}

TEST_F(StepOutputWaitTest, AReadWhoseWaitEndsIsAnsweredWithNoNewOutput) {
  const std::int32_t step = Step();
  Result<nlohmann::json> none = Read(step, 0, milliseconds(20)).get();
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE((*none)["chunks"].empty());
  EXPECT_EQ((*none)["offset"], 0);
  EXPECT_EQ((*none)["done"], false);
}

TEST_F(StepOutputWaitTest, RefusalsAndReadsWithoutAWaitAreAnsweredAtOnce) {
  const std::int32_t step = Step();
  const Caller bob{1001, 1001, "bob"};
  std::future<Result<nlohmann::json>> theirs = Read(step, 0, seconds(30), bob);
  ASSERT_TRUE(Answered(theirs));
  EXPECT_EQ(theirs.get().status().code(), StatusCode::kPermissionDenied);
  std::future<Result<nlohmann::json>> missing = Read(step + 7, 0, seconds(30));
  ASSERT_TRUE(Answered(missing));
  EXPECT_EQ(missing.get().status().code(), StatusCode::kNotFound);
  std::future<Result<nlohmann::json>> now = Read(step, 0, milliseconds(0));
  ASSERT_TRUE(Answered(now));
  EXPECT_TRUE(now.get().ok());
}

TEST_F(StepOutputWaitTest, ReadsStillWaitingAreAnsweredWhenTheControllerStops) {
  const std::int32_t step = Step();
  std::future<Result<nlohmann::json>> read = Read(step, 0, seconds(30));
  Stop();
  ASSERT_TRUE(Answered(read));
  EXPECT_TRUE(read.get().ok());
}

// scontrol show steps reads the job's steps: each with what its job holds on its nodes, and
// the srun that started it as srun named itself.
class StepViewTest : public RunningJobTest {};

TEST_F(StepViewTest, AJobsStepsCarryTheirResourcesAndTheirSrun) {
  Result<nlohmann::json> step = controller_->CreateStep(
      kAlice, job_, {{"argv", {"train"}}, {"srun_host", "login1"}, {"srun_pid", 4242}});
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  Result<nlohmann::json> job = controller_->ShowJob(job_);
  ASSERT_TRUE(job.ok());
  const nlohmann::json& steps = (*job)["steps"];
  ASSERT_EQ(steps.size(), 2u) << steps.dump();
  EXPECT_EQ(steps[0]["step_id"], "batch");
  EXPECT_EQ(steps[0]["cpus"], 4);  // the job's 4 CPUs, all on its one node
  EXPECT_EQ(steps[1]["cpus"], 4);
  EXPECT_EQ(steps[1]["srun_host"], "login1");
  EXPECT_EQ(steps[1]["srun_pid"], 4242);
  Result<nlohmann::json> bad = controller_->CreateStep(
      kAlice, job_, {{"argv", {"train"}}, {"srun_pid", -1}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'srun_pid'"), std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace lockstep::controller

namespace lockstep::controller {
namespace {

// srun --jobid -w NODE: the step runs on the job's nodes named, one task each by default; a node
// outside the allocation is refused, naming it, and no step is made.
class StepNodelistTest : public RunningJobTest {};

TEST_F(StepNodelistTest, AStepRunsOnTheNamedNodeOfTheJob) {
  Result<nlohmann::json> all = controller_->CreateStep(kAlice, job_, {{"argv", {"hostname"}}});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  const std::string last = (*all)["nodes"].back().get<std::string>();
  Result<nlohmann::json> one = controller_->CreateStep(
      kAlice, job_, {{"argv", {"hostname"}}, {"nodelist", last}});
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ((*one)["nodes"], nlohmann::json::array({last}));
  EXPECT_EQ((*one)["ntasks"], 1);

  Result<nlohmann::json> outside = controller_->CreateStep(
      kAlice, job_, {{"argv", {"hostname"}}, {"nodelist", "elsewhere1"}});
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(outside.status().message().find("node elsewhere1 is not in the job's allocation"),
            std::string::npos)
      << outside.status().message();
  Result<nlohmann::json> bad = controller_->CreateStep(
      kAlice, job_, {{"argv", {"hostname"}}, {"nodelist", "gpu[3-"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'nodelist'"), std::string::npos);
  // The refusals made no step: the next one is numbered right after the two made.
  Result<nlohmann::json> next = controller_->CreateStep(kAlice, job_, {{"argv", {"true"}}});
  ASSERT_TRUE(next.ok());
  EXPECT_EQ((*next)["step_id"], (*one)["step_id"].get<int>() + 1);
}

// srun --mpi: refused in srun's words when unknown, and where the backend has no PMIx server
// (Kubernetes); carried to the backend and the tasks' SLURM_MPI_TYPE where it has.
class StepMpiTest : public RunningJobTest {
 protected:
  std::vector<backend::StepLaunch> Launched() {
    controller_->SettleForTest();
    return backend_.step_launches;  // the dispatcher is idle once settled
  }
};

TEST_F(StepMpiTest, TheTypeIsCheckedAndCarriedToTheBackendAndTheTasks) {
  Result<nlohmann::json> unknown =
      controller_->CreateStep(kAlice, job_, {{"argv", {"a.out"}}, {"mpi", "openmpi"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(),
            "step: Invalid MPI type 'openmpi', --mpi=list for acceptable types");
  Result<nlohmann::json> no_server =
      controller_->CreateStep(kAlice, job_, {{"argv", {"a.out"}}, {"mpi", "pmix"}});
  ASSERT_FALSE(no_server.ok());
  EXPECT_EQ(no_server.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(no_server.status().message().find("--mpi=pmix needs lockstep's agents"),
            std::string::npos)
      << no_server.status().message();
  ASSERT_TRUE(controller_->CreateStep(kAlice, job_, {{"argv", {"a.out"}}, {"mpi", "none"}}).ok());
  backend_.mpi = true;
  controller_->AttachBackend(&backend_);
  ASSERT_TRUE(
      controller_->CreateStep(kAlice, job_, {{"argv", {"a.out"}}, {"mpi", "pmix_v4"}}).ok());
  ASSERT_TRUE(controller_->CreateStep(kAlice, job_, {{"argv", {"a.out"}}, {"mpi", "pmi2"}}).ok());
  const std::vector<backend::StepLaunch> launched = Launched();
  ASSERT_EQ(launched.size(), 3u) << "the refusals launched nothing";
  const std::pair<std::string, std::string> want[] = {{"", "none"}, {"pmix", "pmix"},
                                                      {"pmi2", "pmi2"}};
  for (std::size_t i = 0; i < launched.size(); ++i) {
    EXPECT_EQ(launched[i].mpi, want[i].first) << i;
    for (const auto& [node, tasks] : launched[i].tasks_by_node)
      for (const backend::StepTask& t : tasks)
        EXPECT_EQ(t.env.at("SLURM_MPI_TYPE"), want[i].second) << i;
  }
}

}  // namespace
}  // namespace lockstep::controller
