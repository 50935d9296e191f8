// The controller's core: what a backend reports becomes durable state, no backend call is made
// under the controller's lock, only a backend's admission queues jobs for external pods, steps
// are bounded by their allocation, and time comes from the injected clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <future>

#include <sys/stat.h>

#include "controller/controller_test_util.h"
#include "jobspec/validate.h"

namespace lockstep::controller {
namespace {

using testing::ControllerTest;

class CoreTest : public ControllerTest {
 protected:
  void SetUp() override {
    ControllerTest::SetUp();
    if (HasFatalFailure()) return;
    Report(testing::Nodes(2, 8));
  }
};

// Regression: an agent that re-registered without a job it ran, when the job may not be
// requeued, stored COMPLETED (exit 0) and set NODE_FAIL in memory only; after a restart the job
// read COMPLETED and its afterok dependents ran.
TEST_F(CoreTest, ALostRunEndsNodeFailDurablyAndItsAfterokDependentsNeverRun) {
  jobspec::JobSpec once = Spec();
  once.requeue = false;
  Result<JobId> a = controller_->Submit(kAlice, once);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  controller_->PassForTest();
  ASSERT_EQ(Field(*a, "state"), "RUNNING");
  jobspec::JobSpec after = Spec();
  after.dependencies.push_back({jobspec::DependencyType::kAfterOk, *a});
  Result<JobId> b = controller_->Submit(kAlice, after);
  ASSERT_TRUE(b.ok()) << b.status().ToString();

  // The node's backend says nothing runs there any more.
  controller_->events().RunsAlive({backend_.NodeOf(*a)}, {});
  controller_->SettleForTest();
  EXPECT_EQ(Field(*a, "state"), "NODE_FAIL");

  Stop();
  Start();
  Report(testing::Nodes(2, 8));
  controller_->PassForTest();
  EXPECT_EQ(Field(*a, "state"), "NODE_FAIL") << "what the store has";
  EXPECT_EQ(Field(*b, "state"), "PENDING");
  EXPECT_EQ(Field(*b, "reason"), "DependencyNeverSatisfied");
  EXPECT_EQ(backend_.NodeOf(*b), "");
}

// The scheduler forgets finished jobs after min_job_age (300 s), and lockstepd purges them from
// memory then; a dependency on one that ended long ago is judged by how it ended, as stored.
TEST_F(CoreTest, ADependencyOnAJobThatEndedLongAgoFollowsHowItEnded) {
  Result<JobId> ok = controller_->Submit(kAlice, Spec());
  Result<JobId> failed = controller_->Submit(kAlice, Spec());
  ASSERT_TRUE(ok.ok() && failed.ok());
  controller_->PassForTest();
  controller_->events().RunExited({*ok, 0}, {0, 0, false});
  controller_->events().RunExited({*failed, 0}, {1, 0, false});
  controller_->SettleForTest();
  ASSERT_EQ(Field(*ok, "state"), "COMPLETED");
  ASSERT_EQ(Field(*failed, "state"), "FAILED");
  clock_.Advance(std::chrono::hours(2));
  controller_->PassForTest();  // the scheduler forgets them now

  jobspec::JobSpec after_ok = Spec();
  after_ok.dependencies.push_back({jobspec::DependencyType::kAfterOk, *ok});
  jobspec::JobSpec after_failed = Spec();
  after_failed.dependencies.push_back({jobspec::DependencyType::kAfterOk, *failed});
  Result<JobId> runs = controller_->Submit(kAlice, after_ok);
  Result<JobId> never = controller_->Submit(kAlice, after_failed);
  ASSERT_TRUE(runs.ok() && never.ok());
  controller_->PassForTest();
  EXPECT_EQ(Field(*runs, "state"), "RUNNING");
  EXPECT_EQ(Field(*never, "reason"), "DependencyNeverSatisfied");
}

TEST_F(CoreTest, ARunThatMayBeRequeuedGoesBackToTheQueueAndRunsAgain) {
  Result<JobId> a = controller_->Submit(kAlice, Spec());
  ASSERT_TRUE(a.ok());
  controller_->PassForTest();
  const std::string node = backend_.NodeOf(*a);
  controller_->events().RunsAlive({node}, {});
  controller_->PassForTest();
  std::vector<backend::LaunchOrder> launches = backend_.Launches();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[1].job, *a);
  EXPECT_EQ(launches[1].run, 1) << "a new run";
  EXPECT_TRUE(launches[1].append_output);
  // The old run's end, reported late, does not end the new run.
  controller_->events().RunExited({*a, 0}, {0, 0, false});
  controller_->SettleForTest();
  EXPECT_EQ(Field(*a, "state"), "RUNNING");
  controller_->events().RunExited({*a, 1}, {3, 0, false});
  controller_->SettleForTest();
  EXPECT_EQ(Field(*a, "state"), "FAILED");
}

TEST_F(CoreTest, ARunTheControllerNoLongerWantsIsTerminated) {
  Result<JobId> a = controller_->Submit(kAlice, Spec());
  ASSERT_TRUE(a.ok());
  controller_->PassForTest();
  ASSERT_TRUE(controller_->Cancel(kAlice, *a, 0).ok());
  controller_->events().RunExited({*a, 0}, {0, 15, false});
  controller_->SettleForTest();
  ASSERT_EQ(Field(*a, "state"), "CANCELLED");
  // The node comes back still running it: its processes must go.
  controller_->events().RunsAlive({"n1", "n2"}, {{*a, 0}});
  controller_->SettleForTest();
  std::lock_guard<std::mutex> lock(backend_.mu_);
  ASSERT_FALSE(backend_.terminations.empty());
  EXPECT_EQ(backend_.terminations.back(), (backend::RunId{*a, 0}));
}

// A backend whose Launch blocks until the test lets it go.
class BlockingBackend : public testing::RecordingBackend {
 public:
  Status Launch(backend::LaunchOrder order) override {
    std::unique_lock<std::mutex> lock(gate_mu_);
    entered_ = true;
    gate_cv_.notify_all();
    gate_cv_.wait(lock, [this] { return open_; });
    return RecordingBackend::Launch(std::move(order));
  }
  void WaitEntered() {
    std::unique_lock<std::mutex> lock(gate_mu_);
    gate_cv_.wait(lock, [this] { return entered_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(gate_mu_);
    open_ = true;
    gate_cv_.notify_all();
  }

 private:
  std::mutex gate_mu_;
  std::condition_variable gate_cv_;
  bool entered_ = false, open_ = false;
};

TEST_F(CoreTest, NoBackendCallIsMadeUnderTheControllersLock) {
  BlockingBackend slow;
  controller_->AttachBackend(&slow);
  Result<JobId> a = controller_->Submit(kAlice, Spec());
  ASSERT_TRUE(a.ok());
  controller_->events().NodesReported(testing::Nodes(2, 8), true);  // wakes a pass
  slow.WaitEntered();
  // The backend is stuck in Launch: users are still served, submissions still durable.
  auto served = std::async(std::launch::async, [&] {
    Result<JobId> b = controller_->Submit(kAlice, Spec());
    nlohmann::json jobs = controller_->ListJobs(nlohmann::json::object());
    return b.ok() && jobs["jobs"].size() == 2;
  });
  const bool answered = served.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  slow.Open();
  EXPECT_TRUE(answered) << "a request waited for the backend";
  if (answered) {
    EXPECT_TRUE(served.get());
  }
  controller_->SettleForTest();
  controller_->DetachBackend();
  controller_->AttachBackend(&backend_);
  EXPECT_EQ(slow.NodeOf(*a).empty(), false);
}

TEST_F(CoreTest, OnlyTheAdmissionInterfaceQueuesJobsForExternalPods) {
  jobspec::JobSpec pods = Spec();
  pods.hold = true;  // it stays pending
  pods.external = "ml/llm";
  Result<JobId> as_root = controller_->Submit(kRoot, pods);
  ASSERT_FALSE(as_root.ok()) << "root is a user like any other here";
  EXPECT_EQ(as_root.status().code(), StatusCode::kPermissionDenied);
  Result<JobId> admitted = controller_->admission().Admit(pods, "ml");
  ASSERT_TRUE(admitted.ok()) << admitted.status().ToString();
  EXPECT_EQ(Field(*admitted, "user"), "k8s:ml");
  std::vector<backend::ExternalJob> jobs = controller_->admission().ExternalJobs(nullptr);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].key, "ml/llm");
  EXPECT_EQ(jobs[0].phase, backend::ExternalJob::Phase::kPending);
  ASSERT_TRUE(controller_->admission().Withdraw(*admitted).ok());
  EXPECT_EQ(Field(*admitted, "state"), "CANCELLED");
  // A user's job is not the admission's to withdraw.
  Result<JobId> mine = controller_->Submit(kAlice, Spec());
  ASSERT_TRUE(mine.ok());
  EXPECT_FALSE(controller_->admission().Withdraw(*mine).ok());
}

TEST_F(CoreTest, AStepAsksNoMoreTasksThanItsAllocationHolds) {
  backend_.steps = true;
  controller_->AttachBackend(&backend_);
  Result<JobId> a = controller_->Submit(kAlice, Spec(4));
  ASSERT_TRUE(a.ok());
  controller_->PassForTest();
  Result<nlohmann::json> huge =
      controller_->CreateStep(kAlice, *a, {{"argv", {"true"}}, {"ntasks", 100000000}});
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::kInvalidArgument);
  Result<nlohmann::json> negative =
      controller_->CreateStep(kAlice, *a, {{"argv", {"true"}}, {"ntasks", -1}});
  EXPECT_FALSE(negative.ok());
  Result<nlohmann::json> typed =
      controller_->CreateStep(kAlice, *a, {{"argv", {"true"}}, {"env", {{"A", 1}}}});
  ASSERT_FALSE(typed.ok());
  EXPECT_EQ(typed.status().message(), "step: 'env.A' must be a string");
  Result<nlohmann::json> ok =
      controller_->CreateStep(kAlice, *a, {{"argv", {"true"}}, {"ntasks", 4}});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  controller_->SettleForTest();
  std::lock_guard<std::mutex> lock(backend_.mu_);
  ASSERT_EQ(backend_.step_launches.size(), 1u) << "the refused ones sent nothing";
  EXPECT_EQ(backend_.step_launches[0].tasks_by_node.begin()->second.size(), 4u);
}

TEST_F(CoreTest, ATimeLimitEndsTheRunWhenTheClockPassesIt) {
  jobspec::JobSpec s = Spec();
  s.time_limit = 60;
  Result<JobId> a = controller_->Submit(kAlice, s);
  ASSERT_TRUE(a.ok());
  controller_->PassForTest();
  ASSERT_EQ(Field(*a, "state"), "RUNNING");
  clock_.Advance(std::chrono::seconds(59));
  controller_->PassForTest();
  EXPECT_EQ(Field(*a, "state"), "RUNNING");
  clock_.Advance(std::chrono::seconds(2));
  controller_->PassForTest();
  EXPECT_EQ(Field(*a, "state"), "COMPLETING");
  controller_->events().RunExited({*a, 0}, {0, 15, false});
  controller_->SettleForTest();
  EXPECT_EQ(Field(*a, "state"), "TIMEOUT");
}

// Issue 27: an operator's TimeLimit=+N could pass the maximum limit a submission may have, and
// squeue then printed INVALID. Refused, with the limit it would have been and the maximum.
TEST_F(CoreTest, RegressionATimeLimitPastTheMaximumIsRefusedHoweverAsked) {
  jobspec::JobSpec s = Spec();
  s.hold = true;
  s.time_limit = 600;
  Result<JobId> a = controller_->Submit(kAlice, s);
  ASSERT_TRUE(a.ok());
  auto limit = [&] { return controller_->ShowJob(*a)->value("time_limit", Seconds{-1}); };
  const Seconds room = jobspec::kMaxTimeLimit - 600;
  for (const nlohmann::json& change :
       {nlohmann::json{{"time_limit_add", room + 60}},
        nlohmann::json{{"time_limit", jobspec::kMaxTimeLimit + 60}}}) {
    Status st = controller_->Update(kRoot, *a, change);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << change.dump();
    EXPECT_EQ(st.message(), "update: TimeLimit: job " + std::to_string(*a) +
                                "'s limit would be 4294967295 minutes, above the maximum "
                                "4294967294 minutes")
        << change.dump();
    EXPECT_EQ(limit(), 600) << change.dump();
  }
  ASSERT_TRUE(controller_->Update(kRoot, *a, {{"time_limit_add", room}}).ok());
  EXPECT_EQ(limit(), jobspec::kMaxTimeLimit);
}

TEST_F(CoreTest, WhatAnAnswerSaidIsWhatARestartFinds) {
  jobspec::JobSpec held = Spec();
  held.hold = true;
  Result<JobId> a = controller_->Submit(kAlice, held);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(controller_->Update(kAlice, *a, {{"name", "renamed"}}).ok());
  ASSERT_TRUE(controller_->SetNodeState(kRoot, "n1", "DRAIN", "bad fan").ok());
  Stop();
  Start();
  Report(testing::Nodes(2, 8));
  EXPECT_EQ(Field(*a, "name"), "renamed");
  controller_->PassForTest();
  EXPECT_EQ(Field(*a, "reason"), "JobHeldUser");
  nlohmann::json nodes = controller_->ListNodes();
  EXPECT_EQ(nodes["nodes"][0].value("reason", ""), "bad fan");
}

// squeue over 100,000 jobs must not stall the controller for the second the listing takes: the
// listing lets others take the lock between batches of jobs, and still shows every job once, in
// id order, a job submitted meanwhile included.
TEST_F(CoreTest, AListingOfManyJobsLetsOthersInBetweenBatchesAndShowsEachJobOnce) {
  const std::size_t count = 3 * Controller::kJobsPerHold + 5;
  jobspec::JobSpec held = Spec();
  held.hold = true;
  std::vector<JobId> submitted;
  for (std::size_t i = 0; i < count; ++i) {
    Result<JobId> id = controller_->Submit(kAlice, held);
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    submitted.push_back(*id);
  }
  // Between batches the lock is free: a submission goes through (with the lock still held it
  // would wait for the listing, which waits for it).
  int pauses = 0;
  controller_->SetBetweenListBatchesForTest([&] {
    ++pauses;
    Result<JobId> id = controller_->Submit(kAlice, held);
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    submitted.push_back(*id);
  });
  nlohmann::json listed = controller_->ListJobs(nlohmann::json::object())["jobs"];
  controller_->SetBetweenListBatchesForTest(nullptr);
  EXPECT_GE(pauses, 3) << "one pause between batches of " << Controller::kJobsPerHold;
  ASSERT_EQ(listed.size(), submitted.size()) << "the jobs submitted during the listing too";
  for (std::size_t i = 0; i < submitted.size(); ++i)
    EXPECT_EQ(listed[i]["job_id"].get<JobId>(), submitted[i]);
  nlohmann::json accounted = controller_->Accounting(nlohmann::json::object())["jobs"];
  EXPECT_EQ(accounted.size(), submitted.size());
}

// After a restart of lockstepd, an scancel can come before the node's agent is back: the
// agent backend does not know the run yet and the terminate order reaches nobody. When the agent
// reports the run alive, the order is given again, and the job ends CANCELLED.
TEST_F(CoreTest, ACancelledRunReportedAliveAgainIsTerminatedAgain) {
  Result<JobId> id = controller_->Submit(kAlice, Spec());
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  controller_->PassForTest();
  ASSERT_EQ(Field(*id, "state"), "RUNNING");
  ASSERT_TRUE(controller_->Cancel(kAlice, *id, 0).ok());
  controller_->SettleForTest();
  ASSERT_EQ(Field(*id, "state"), "COMPLETING");
  auto terminations = [&] {
    std::lock_guard<std::mutex> lock(backend_.mu_);
    return std::count(backend_.terminations.begin(), backend_.terminations.end(),
                      backend::RunId{*id, 0});
  };
  const auto before = terminations();
  controller_->events().RunsAlive({backend_.NodeOf(*id)}, {{*id, 0}});
  controller_->SettleForTest();
  EXPECT_EQ(terminations(), before + 1) << "the run's terminate order, given again";
  EXPECT_EQ(Field(*id, "state"), "COMPLETING");
  controller_->events().RunExited({*id, 0}, {0, 15, false});
  controller_->SettleForTest();
  EXPECT_EQ(Field(*id, "state"), "CANCELLED");
}

// A node without cgroup controllers runs jobs but cannot hold them to their memory or CPUs: the
// node says so, and so does the submission, as a warning.
TEST_F(CoreTest, LimitsANodeCannotEnforceAreShownAndWarnedOf) {
  std::vector<backend::NodeReport> nodes = testing::Nodes(2, 8);
  nodes[1].enforces_memory = false;
  Report(nodes);
  nlohmann::json listed = controller_->ListNodes()["nodes"];
  EXPECT_EQ(listed[0]["limits_enforced"], "memory,cpus");
  EXPECT_EQ(listed[1]["limits_enforced"], "cpus");
  jobspec::JobSpec with_memory = Spec();
  with_memory.mem_mb = 100;
  const std::vector<std::string> warned = controller_->SubmitWarnings(with_memory);
  ASSERT_EQ(warned.size(), 1u);
  EXPECT_EQ(warned[0],
            "the memory this job asks for is not enforced on n2 (no cgroup memory controller "
            "there; scontrol show node: LimitsEnforced): it may use more");
  EXPECT_TRUE(controller_->SubmitWarnings(Spec()).empty()) << "no memory asked for";
  nodes[0].enforces_cpus = nodes[1].enforces_cpus = false;
  Report(nodes);
  EXPECT_EQ(controller_->ListNodes()["nodes"][1]["limits_enforced"], "none");
  ASSERT_EQ(controller_->SubmitWarnings(Spec()).size(), 1u);
  EXPECT_EQ(controller_->SubmitWarnings(Spec())[0],
            "the CPUs this job is given are not enforced on n[1-2] (no cgroup cpu controller "
            "there; scontrol show node: LimitsEnforced): its tasks may use more");
  jobspec::JobSpec whole = Spec();
  whole.exclusive = true;
  EXPECT_TRUE(controller_->SubmitWarnings(whole).empty()) << "its nodes are its own";
}

// --switches as in Slurm: a job waits for its switch count at most scheduler.max_switch_wait
// (also the wait of a count without `@time`), then runs on any; scontrol shows Switches=.
TEST_F(ControllerTest, ASwitchCountHoldsAJobAtMostMaxSwitchWait) {
  Stop();
  std::ofstream(dir_.File("cluster.yaml"))
      << "nodes:\n  - {names: \"n[1-4]\", cpus: 8, memory: 1G}\n"
         "topology:\n  switches:\n    - {name: leaf1, nodes: \"n[1-2]\"}\n"
         "    - {name: leaf2, nodes: \"n[3-4]\"}\n    - {name: spine, switches: \"leaf[1-2]\"}\n"
         "partitions:\n  - {name: gpu, nodes: ALL, default: true}\n"
         "scheduler:\n  max_switch_wait: 120\n";
  Start();
  std::vector<backend::NodeReport> up;
  for (const char* n : {"n1", "n2", "n3", "n4"}) {
    up.emplace_back();
    up.back().name = n;
  }
  Report(up);
  // One busy node in each leaf: two free nodes, on two switches.
  for (const char* node : {"n1", "n3"}) {
    jobspec::JobSpec busy = Spec();
    busy.nodelist = node;
    ASSERT_TRUE(controller_->Submit(kAlice, busy).ok());
  }
  jobspec::JobSpec one_switch = Spec(1);
  one_switch.min_nodes = one_switch.max_nodes = 2;
  one_switch.max_switches = 1;
  Result<JobId> waits = controller_->Submit(kAlice, one_switch);
  one_switch.switches_wait = 3600;  // --switches=1@1:00:00, more than the cluster allows
  Result<JobId> capped = controller_->Submit(kAlice, one_switch);
  ASSERT_TRUE(waits.ok() && capped.ok());
  controller_->PassForTest();
  EXPECT_EQ(Field(*waits, "state"), "PENDING");
  EXPECT_EQ(Field(*waits, "reason"), "Resources");  // Slurm has no reason of its own for it
  for (JobId id : {*waits, *capped}) {
    Result<nlohmann::json> j = controller_->ShowJob(id);
    ASSERT_TRUE(j.ok());
    EXPECT_EQ((*j)["max_switches"], 1);
    EXPECT_EQ((*j)["switches_wait"], 120);
  }
  EXPECT_NE(controller_->ConfigView()["SchedulerParameters"].get<std::string>().find(
                "max_switch_wait=120"),
            std::string::npos);
  clock_.Advance(std::chrono::seconds(119));
  controller_->PassForTest();
  EXPECT_EQ(Field(*waits, "state"), "PENDING");
  clock_.Advance(std::chrono::seconds(2));
  controller_->PassForTest();
  EXPECT_EQ(Field(*waits, "state"), "RUNNING") << "waited long enough: any two nodes";
}

// scontrol show topology's records: leaves at level 0 with their nodes, a switch above them one
// level up with its children and every node below; a node under no switch is in none. Show
// config names the plugin and what lockstepd knows of itself.
TEST_F(ControllerTest, TopologyViewReportsTheSwitchesAsSlurmsTreeDoes) {
  Stop();
  std::ofstream(dir_.File("cluster.yaml"))
      << "nodes:\n  - {names: \"n[1-5]\", cpus: 8, memory: 1G}\n"
         "topology:\n  switches:\n    - {name: spine, switches: \"leaf[1-2]\"}\n"
         "    - {name: leaf1, nodes: \"n[1-2]\"}\n    - {name: leaf2, nodes: \"n[3-4]\"}\n"
         "partitions:\n  - {name: gpu, nodes: ALL, default: true}\n";
  Start();
  const nlohmann::json expected = nlohmann::json::parse(R"({"plugin": "topology/tree",
    "switches": [
      {"name": "spine", "level": 1, "link_speed": 1, "nodes": "n[1-4]", "switches": "leaf[1-2]"},
      {"name": "leaf1", "level": 0, "link_speed": 1, "nodes": "n[1-2]", "switches": ""},
      {"name": "leaf2", "level": 0, "link_speed": 1, "nodes": "n[3-4]", "switches": ""}],
    "blocks": []})");
  EXPECT_EQ(controller_->TopologyView(), expected);
  const nlohmann::json config = controller_->ConfigView();
  EXPECT_EQ(config["TopologyPlugin"], "topology/tree");
  EXPECT_EQ(config["MaxNodeCount"], "5");
  EXPECT_TRUE(config["BOOT_TIME"].is_number_integer());
  EXPECT_EQ(config["HealthCheckProgram"], "(null)");
  Result<JobId> next = controller_->Submit(kAlice, Spec());
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(config["NEXT_JOB_ID"], std::to_string(*next));
}

}  // namespace
}  // namespace lockstep::controller

namespace lockstep::controller {
namespace {

// Regression: every task's record embedded the whole spec with the full index list, so an
// array's store grew with the square of its size (a 5,000-task array left a 920 MB WAL).
TEST_F(CoreTest, AnArraysTasksShareOneStoredSpec) {
  jobspec::JobSpec s = Spec(16);  // never fits: every task stays pending
  s.min_nodes = s.max_nodes = 1;
  s.hold = true;
  Result<jobspec::JobSpec> parsed = jobspec::JobSpecFromJson(
      R"({"name": "sweep", "script": "#!/bin/sh\n", "work_dir": "/tmp", "hold": true,
          "array": {"text": "0-9999:2%5"}})");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->array->indices.size(), 5000u) << "the text is expanded";
  EXPECT_EQ(parsed->array->max_running, 5u);
  Result<JobId> first = controller_->Submit(kAlice, *parsed);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  struct stat st {};
  ASSERT_EQ(::stat(dir_.File("state/lockstepd.db-wal").c_str(), &st), 0);
  EXPECT_LT(st.st_size, 16 << 20) << "the store holds the array's spec once";
  Stop();
  Start();
  // The tasks not split off are one record (controller_arrays.cc), which counts them.
  nlohmann::json jobs = controller_->ListJobs({{"all", "1"}});
  std::uint64_t tasks = 0;
  for (const nlohmann::json& j : jobs["jobs"])
    tasks += j.value("array_rest", false) ? j["array_tasks_pending"].get<std::uint64_t>() : 1;
  ASSERT_EQ(tasks, 5000u);
  EXPECT_LE(jobs["jobs"].size(), 2u);
  EXPECT_EQ(Field(*first + 4999, "name"), "sweep");
  // A task changed alone keeps its own spec across a restart; the others keep the array's.
  ASSERT_TRUE(controller_->Update(kAlice, *first + 7, {{"name", "odd-one"}}).ok());
  Stop();
  Start();
  EXPECT_EQ(Field(*first + 7, "name"), "odd-one");
  EXPECT_EQ(Field(*first + 8, "name"), "sweep");
}

}  // namespace
}  // namespace lockstep::controller

namespace lockstep::controller {
namespace {

class FairShareUsageTest : public testing::ControllerTest {
 protected:
  void SetUp() override {
    ControllerTest::SetUp();
    if (HasFatalFailure()) return;
    Report(testing::Nodes(2, 8));
  }
  // sshare's RawUsage of `user`'s association, or -1 when it has none.
  double RawUsage(const std::string& user) {
    const nlohmann::json shares = controller_->Shares();
    SCOPED_TRACE(shares.dump());
    for (const nlohmann::json& row : shares["shares"])
      if (row.value("user", "") == user) return row.value("raw_usage", -1.0);
    return -1;
  }
};

// Fair-share usage: a running job charges its CPUs times the seconds it ran, at each interval
// and when it ends, usage decays with the half-life, and a restart keeps it (Slurm's RawUsage).
TEST_F(FairShareUsageTest, RunningJobsChargeTheirAssociationAndARestartKeepsIt) {
  Result<JobId> a = controller_->Submit(kAlice, Spec(8));
  ASSERT_TRUE(a.ok());
  controller_->PassForTest();
  ASSERT_EQ(Field(*a, "state"), "RUNNING");
  EXPECT_EQ(RawUsage("alice"), 0);
  clock_.Advance(std::chrono::seconds(120));  // two intervals of a minute, in one step
  controller_->PassForTest();
  const double after_two_minutes = RawUsage("alice");
  // 8 CPUs x 120 s, less the decay of 120 s in a 7-day half-life (under 0.02%).
  EXPECT_NEAR(after_two_minutes, 960.0, 0.2);
  clock_.Advance(std::chrono::seconds(30));  // not a whole interval: charged when the run ends
  controller_->events().RunExited({*a, 0}, {0, 0, false});
  controller_->SettleForTest();
  ASSERT_EQ(Field(*a, "state"), "COMPLETED");
  clock_.Advance(std::chrono::seconds(60));
  controller_->PassForTest();
  EXPECT_NEAR(RawUsage("alice"), 960.0 + 240.0, 0.4);

  Stop();
  Start();
  Report(testing::Nodes(2, 8));
  EXPECT_NEAR(RawUsage("alice"), 1200.0, 0.4) << "the usage is stored";
  // A half-life later, half of it is left.
  clock_.Advance(std::chrono::seconds(7 * 24 * 3600));
  controller_->PassForTest();
  EXPECT_NEAR(RawUsage("alice"), 600.0, 0.4);
}

}  // namespace
}  // namespace lockstep::controller
