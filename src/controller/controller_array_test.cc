// A job array over a real Controller and store: a pending array is one record in the store and
// one job in the engine however many tasks it has, its tasks start one by one as resources
// allow (each with SLURM_ARRAY_TASK_ID), and none is lost across a restart of lockstepd.
#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <set>

#include "controller/controller_test_util.h"

namespace lockstep::controller {
namespace {

using testing::ControllerTest;

class ArrayTest : public ControllerTest {
 protected:
  void SetUp() override {
    ControllerTest::SetUp();
    if (HasFatalFailure()) return;
    Report(testing::Nodes(2, 8));
  }

  // --array=0-(count-1) of one-node jobs that take a whole 8-CPU node each.
  jobspec::JobSpec ArraySpec(std::uint32_t count) {
    jobspec::JobSpec s = Spec(8);
    jobspec::ArraySpec& a = s.array.emplace();
    a.indices.resize(count);
    std::iota(a.indices.begin(), a.indices.end(), 0u);
    a.text = "0-" + std::to_string(count - 1);
    return s;
  }

  std::size_t Rows(const char* table) {
    Result<std::vector<store::Record>> rows = controller_->store().Scan(table);
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? rows->size() : 0;
  }

  // SLURM_ARRAY_TASK_ID of every launch so far, in order.
  std::vector<std::string> LaunchedTasks() {
    std::vector<std::string> out;
    for (const backend::LaunchOrder& l : backend_.Launches())
      out.push_back(l.env.count("SLURM_ARRAY_TASK_ID") ? l.env.at("SLURM_ARRAY_TASK_ID") : "-");
    return out;
  }

  // Ends every run that is RUNNING, successfully.
  void EndRunningTasks() {
    const nlohmann::json running = controller_->ListJobs({{"state", "RUNNING"}})["jobs"];
    for (const nlohmann::json& j : running)
      controller_->events().RunExited({j["job_id"].get<JobId>(), 0}, {0, 0, false});
    controller_->SettleForTest();
  }

  // Tasks accounted for: the records of split-off tasks plus the tasks their array still keeps.
  std::uint64_t TasksKnown(JobId array) {
    std::uint64_t n = 0;
    const nlohmann::json all = controller_->ListJobs({{"all", "1"}});
    for (const nlohmann::json& j : all["jobs"]) {
      if (j.value("array_job_id", JobId{0}) != array) continue;
      n += j.value("array_rest", false) ? j["array_tasks_pending"].get<std::uint64_t>() : 1;
    }
    return n;
  }

  nlohmann::json Rest(JobId array) {
    const nlohmann::json all = controller_->ListJobs({{"all", "1"}});
    for (const nlohmann::json& j : all["jobs"])
      if (j.value("array_rest", false) && j["job_id"] == array) return j;
    return nullptr;
  }

  // Two passes: the one that starts tasks, and the one their array's next window asks for.
  void Passes() {
    controller_->PassForTest();
    controller_->PassForTest();
  }
};

TEST_F(ArrayTest, AMillionTaskArrayIsOneRecordAndItsTasksStartOneByOne) {
  Result<JobId> array = controller_->Submit(kAlice, ArraySpec(1'000'000));
  ASSERT_TRUE(array.ok()) << array.status().ToString();
  Passes();
  EXPECT_EQ(LaunchedTasks(), (std::vector<std::string>{"0", "1"}));
  const std::vector<backend::LaunchOrder> launches = backend_.Launches();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].job, *array);
  EXPECT_EQ(launches[1].job, *array + 1);
  EXPECT_EQ(launches[1].env.at("SLURM_ARRAY_JOB_ID"), std::to_string(*array));
  EXPECT_EQ(launches[1].env.at("SLURM_ARRAY_TASK_COUNT"), "1000000");
  EXPECT_EQ(launches[1].env.at("SLURM_ARRAY_TASK_MAX"), "999999");

  // The store holds the array's one record and the few tasks split off, not a million rows;
  // the engine holds the running tasks and a window of pending ones.
  EXPECT_EQ(Rows("pending_arrays"), 1u);
  EXPECT_LE(Rows("jobs"), 8u);
  auto [pending, running] = controller_->SchedulerJobsForTest();
  EXPECT_LE(pending, 4u);
  EXPECT_EQ(running, 2u);
  nlohmann::json rest = Rest(*array);
  ASSERT_TRUE(rest.is_object());
  EXPECT_EQ(rest["state"], "PENDING");
  EXPECT_EQ(TasksKnown(*array), 1'000'000u);

  // As tasks end, the next ones start, in order.
  EndRunningTasks();
  Passes();
  EXPECT_EQ(LaunchedTasks(), (std::vector<std::string>{"0", "1", "2", "3"}));

  // lockstepd restarts: every task is still there, and the next ones start after it.
  Stop();
  Start();
  Report(testing::Nodes(2, 8));
  EXPECT_EQ(TasksKnown(*array), 1'000'000u);
  EXPECT_EQ(Field(*array + 3, "state"), "RUNNING");
  EndRunningTasks();
  Passes();
  std::vector<std::string> after = LaunchedTasks();
  ASSERT_EQ(after.size(), 6u);
  EXPECT_EQ(after[4], "4");
  EXPECT_EQ(after[5], "5");
  EXPECT_EQ(Rows("pending_arrays"), 1u);
  EXPECT_LE(Rows("jobs"), 16u);
  EXPECT_EQ(TasksKnown(*array), 1'000'000u);
}

TEST_F(ArrayTest, ATaskIsCancelledByItsIdAndTheRestOfTheArrayAsOneRecord) {
  Result<JobId> array = controller_->Submit(kAlice, ArraySpec(100));
  ASSERT_TRUE(array.ok()) << array.status().ToString();
  Passes();
  const JobId task50 = *array + 50;
  EXPECT_EQ(Field(task50, "state"), "PENDING") << "shown while still in its array's record";
  ASSERT_TRUE(controller_->Cancel(kAlice, task50, 0).ok());
  EXPECT_EQ(Field(task50, "state"), "CANCELLED");
  std::string text = Rest(*array)["array_task_str"];
  EXPECT_NE(text.find("49,51-99"), std::string::npos) << text;

  const Caller bob{1001, 1001, "bob"};
  EXPECT_FALSE(controller_->ArrayRestAction(bob, *array, "cancel").ok()) << "not bob's";
  ASSERT_TRUE(controller_->ArrayRestAction(kAlice, *array, "cancel").ok());
  EXPECT_TRUE(controller_->ListJobs({{"state", "PENDING"}})["jobs"].empty());
  nlohmann::json rest = Rest(*array);
  ASSERT_TRUE(rest.is_object()) << "sacct still shows the tasks that never ran";
  EXPECT_EQ(rest["state"], "CANCELLED");

  const std::size_t launched = backend_.Launches().size();
  Stop();
  Start();
  Report(testing::Nodes(2, 8));
  EndRunningTasks();
  Passes();
  EXPECT_EQ(backend_.Launches().size(), launched) << "nothing starts after the cancel";
  EXPECT_EQ(Rest(*array)["state"], "CANCELLED");
  EXPECT_EQ(TasksKnown(*array), 100u);
}

TEST_F(ArrayTest, ADependencyOnATaskStillInItsArrayWaitsForThatTask) {
  jobspec::JobSpec held = ArraySpec(10);
  held.hold = true;
  Result<JobId> array = controller_->Submit(kAlice, held);
  ASSERT_TRUE(array.ok());
  jobspec::JobSpec after = Spec(1);
  jobspec::DependencySpec d;
  d.type = jobspec::DependencyType::kAfterAny;
  d.job = *array;
  d.has_task = true;
  d.array_task = 7;
  after.dependencies.push_back(d);
  Result<JobId> waits = controller_->Submit(kAlice, after);
  ASSERT_TRUE(waits.ok()) << waits.status().ToString();
  Passes();
  EXPECT_EQ(Field(*waits, "state"), "PENDING");
  EXPECT_EQ(Field(*waits, "reason"), "Dependency");
  ASSERT_TRUE(controller_->Cancel(kAlice, *array + 7, 0).ok());
  Passes();
  EXPECT_EQ(Field(*waits, "state"), "RUNNING");
  EXPECT_EQ(Field(*array + 8, "state"), "PENDING") << "the rest stays held";
}

TEST_F(ArrayTest, HoldingTheArrayHoldsTheTasksNotStartedAndReleaseStartsThem) {
  Result<JobId> array = controller_->Submit(kAlice, ArraySpec(10));
  ASSERT_TRUE(array.ok());
  ASSERT_TRUE(controller_->ArrayRestAction(kAlice, *array, "hold").ok());
  Passes();
  EndRunningTasks();  // what started before the hold
  Passes();
  const std::size_t launched = backend_.Launches().size();
  EXPECT_LE(launched, 1u);
  EndRunningTasks();
  Passes();
  EXPECT_EQ(backend_.Launches().size(), launched) << "held: nothing more starts";
  EXPECT_EQ(Rest(*array)["reason"], "JobHeldUser");
  ASSERT_TRUE(controller_->ArrayRestAction(kAlice, *array, "release").ok());
  Passes();
  EXPECT_EQ(backend_.Launches().size(), launched + 2);
  EXPECT_EQ(TasksKnown(*array), 10u);
}

TEST_F(ArrayTest, AnArrayBeyondMaxArraySizeIsRefusedAndNothingIsQueued) {
  Stop();
  std::ofstream(dir_.File("cluster.yaml"))
      << "backend: kubernetes\nscheduler: {max_array_size: 1001}\n"
         "partitions:\n  - {name: gpu, nodes: ALL, default: true}\n";
  Start();
  Report(testing::Nodes(2, 8));
  Result<JobId> refused = controller_->Submit(kAlice, ArraySpec(1002));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "Invalid job array specification: index 1001 is not below MaxArraySize=1001");
  EXPECT_TRUE(controller_->ListJobs({{"all", "1"}})["jobs"].empty());
  EXPECT_EQ(Rows("pending_arrays"), 0u);
  EXPECT_TRUE(controller_->Submit(kAlice, ArraySpec(1001)).ok());
}

// squeue -j ID asks lockstepd for the jobs of those ids (and their arrays' tasks), which it
// looks up: the same jobs a whole listing filtered by id gives.
TEST_F(ArrayTest, JobsNamedByIdAreLookedUpWithTheirArraysTasks) {
  Result<JobId> before = controller_->Submit(kAlice, Spec(8));
  Result<JobId> array = controller_->Submit(kAlice, ArraySpec(10));
  Result<JobId> after = controller_->Submit(kAlice, Spec(8));
  ASSERT_TRUE(before.ok() && array.ok() && after.ok());
  Passes();  // some tasks split off and started, the rest in the array's record
  const nlohmann::json all = controller_->ListJobs({{"all", "1"}})["jobs"];
  auto ids_of = [](const nlohmann::json& jobs) {
    std::vector<std::pair<JobId, bool>> out;
    for (const nlohmann::json& j : jobs) out.emplace_back(j["job_id"].get<JobId>(), j.value("array_rest", false));
    std::sort(out.begin(), out.end());
    return out;
  };
  auto expected = [&](std::set<JobId> named) {
    nlohmann::json kept = nlohmann::json::array();
    for (const nlohmann::json& j : all)
      if (named.count(j["job_id"].get<JobId>()) || named.count(j.value("array_job_id", JobId{0})))
        kept.push_back(j);
    return ids_of(kept);
  };
  auto listed = [&](const std::string& job) {
    return ids_of(controller_->ListJobs({{"all", "1"}, {"job", job}})["jobs"]);
  };
  EXPECT_EQ(listed(std::to_string(*before)), expected({*before}));
  EXPECT_EQ(listed(std::to_string(*array)), expected({*array}));
  EXPECT_GE(listed(std::to_string(*array)).size(), 3u);  // started tasks and the rest's record
  EXPECT_EQ(listed(std::to_string(*after) + "," + std::to_string(*before)), expected({*before, *after}));
  // A split-off task by its own job id: itself only.
  EXPECT_EQ(listed(std::to_string(*array + 1)), expected({*array + 1}));
  EXPECT_TRUE(listed("999999").empty());
  EXPECT_TRUE(listed("x").empty());
}

}  // namespace
}  // namespace lockstep::controller
