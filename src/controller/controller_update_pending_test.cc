// scontrol update of a pending job's placement and size (controller_update_pending.cc), of a
// partition's state and limit (controller_partitions.cc) and scontrol notify
// (controller_notify.cc), over a real Controller and store with a ManualClock: each field
// reaches the engine at the next pass, each refusal changes nothing, and partition changes
// outlive a restart.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <future>

#include "common/hostlist.h"
#include "controller/controller_test_util.h"
#include "policy/policy_gate.h"

namespace lockstep::controller {
namespace {

using testing::ControllerTest;

class UpdatePendingTest : public ControllerTest {
 protected:
  void SetUp() override {
    std::ofstream(dir_.File("cluster.yaml"))
        << "backend: kubernetes\n"
           "partitions:\n  - {name: gpu, nodes: ALL, default: true}\n  - {name: cpu, nodes: ALL}\n"
           "qos:\n  - name: normal\n  - name: high\n";
    Start();
    Report(testing::Nodes(4, 8));
  }

  // A held one-node job of alice's (so nothing starts it unasked).
  JobId Held(int cpus = 1) {
    jobspec::JobSpec s = Spec(cpus);
    s.hold = true;
    Result<JobId> id = controller_->Submit(kAlice, std::move(s));
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }
  JobId Running(int cpus = 8) {
    Result<JobId> id = controller_->Submit(kAlice, Spec(cpus));
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    controller_->PassForTest();
    EXPECT_EQ(Field(*id, "state"), "RUNNING");
    return id.ok() ? *id : 0;
  }
  nlohmann::json Job(JobId id) {
    Result<nlohmann::json> j = controller_->ShowJob(id);
    return j.ok() ? *j : nlohmann::json();
  }
  Status Update(const Caller& who, JobId id, const nlohmann::json& changes) {
    return controller_->Update(who, id, changes);
  }
};

TEST_F(UpdatePendingTest, EachFieldOfAPendingJobChangesAndReachesTheEngine) {
  const JobId id = Held();
  const JobId other = Held();
  Status s = Update(kAlice, id,
                    {{"partition", "cpu"},
                     {"qos", "high"},
                     {"min_nodes", 2},
                     {"max_nodes", 3},
                     {"num_cpus", 6},
                     {"mem_per_node_mb", 512},
                     {"nodelist", "n2"},
                     {"exclude", "n4"},
                     {"dependency", "afterok:" + std::to_string(other)},
                     {"comment", "moved by the test"}});
  ASSERT_TRUE(s.ok()) << s.ToString();
  nlohmann::json j = Job(id);
  EXPECT_EQ(j["partition"], "cpu");
  EXPECT_EQ(j["qos"], "high");
  EXPECT_EQ(j["node_count"], 2);
  EXPECT_EQ(j["cpus"], 6) << "two tasks of three CPUs";
  EXPECT_EQ(j["mem_mb"], 1024) << "512 MB on each of two nodes";
  EXPECT_EQ(j["req_nodes"], "n2");
  EXPECT_EQ(j["exc_nodes"], "n4");
  EXPECT_EQ(j["dependency"], "afterok:" + std::to_string(other));
  EXPECT_EQ(j["comment"], "moved by the test");

  // Released, it waits for its dependency; cleared, it runs where it now asks to.
  ASSERT_TRUE(controller_->Release(kAlice, id).ok());
  controller_->PassForTest();
  EXPECT_EQ(Job(id)["reason"], "Dependency");
  ASSERT_TRUE(Update(kAlice, id, {{"dependency", ""}}).ok());
  controller_->PassForTest();
  j = Job(id);
  EXPECT_EQ(j["state"], "RUNNING") << j.dump();
  EXPECT_EQ(j["partition"], "cpu");
  // 2 or 3 nodes (NumNodes=2-3), n2 among them and n4 not; three CPUs on each.
  Result<std::vector<std::string>> nodes = ExpandHostlist(j["nodes"].get<std::string>());
  ASSERT_TRUE(nodes.ok());
  EXPECT_GE(nodes->size(), 2u);
  EXPECT_LE(nodes->size(), 3u);
  EXPECT_NE(std::find(nodes->begin(), nodes->end(), "n2"), nodes->end()) << j["nodes"];
  EXPECT_EQ(std::find(nodes->begin(), nodes->end(), "n4"), nodes->end()) << j["nodes"];
  EXPECT_EQ(j["cpus"], 3 * static_cast<int>(nodes->size()));

  // Durable: after a restart the job is as changed.
  Stop();
  Start();
  EXPECT_EQ(Job(id)["partition"], "cpu");
  EXPECT_EQ(Job(id)["comment"], "moved by the test");
}

TEST_F(UpdatePendingTest, GpusMemoryPerCpuAndStartTime) {
  const JobId id = Held();
  ASSERT_TRUE(Update(kAlice, id, {{"mem_per_cpu_mb", 100}, {"num_cpus", 2}}).ok());
  EXPECT_EQ(Job(id)["mem_mb"], 200);
  const Time later = clock_.Now() + 3600;
  ASSERT_TRUE(Update(kAlice, id, {{"begin_time", later}}).ok());
  EXPECT_EQ(Job(id)["eligible_time"], later);
  ASSERT_TRUE(controller_->Release(kAlice, id).ok());
  controller_->PassForTest();
  EXPECT_EQ(Job(id)["reason"], "BeginTime");
  // Gres: these nodes have no GPU, so no node could hold it; "" clears it again.
  Status s = Update(kAlice, id, {{"gres", "gpu:2"}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_EQ(Job(id)["tres_per_node"], "");
  s = Update(kAlice, id, {{"gres", "gpu:a:b:c"}});
  EXPECT_NE(s.message().find("Gres: 'gpu:a:b:c'"), std::string::npos) << s.ToString();
  ASSERT_TRUE(Update(kAlice, id, {{"gres", ""}, {"begin_time", 0}}).ok());
  controller_->PassForTest();
  EXPECT_EQ(Job(id)["state"], "RUNNING");
}

TEST_F(UpdatePendingTest, RefusalsChangeNothing) {
  const JobId pending = Held();
  const JobId running = Running();
  // What a refused update must leave as it was.
  auto asked = [&] {
    nlohmann::json j = Job(pending);
    return nlohmann::json::array({j["partition"], j["qos"], j["node_count"], j["cpus"],
                                  j["req_nodes"], j["dependency"], j["comment"]});
  };
  const nlohmann::json before = asked();
  // Only a pending job may move: Slurm's words.
  Status s = Update(kAlice, running, {{"partition", "cpu"}});
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "Job is no longer pending execution");
  s = Update(kAlice, running, {{"min_nodes", 2}});
  EXPECT_EQ(s.message(), "Job is no longer pending execution");
  EXPECT_EQ(Job(running)["partition"], "gpu");
  // A comment may change while it runs.
  ASSERT_TRUE(Update(kAlice, running, {{"comment", "still running"}}).ok());
  EXPECT_EQ(Job(running)["comment"], "still running");

  s = Update(kAlice, pending, {{"partition", "nosuch"}, {"comment", "x"}});
  EXPECT_EQ(s.message(), "Invalid partition name specified");
  s = Update(kAlice, pending, {{"qos", "nosuch"}});
  EXPECT_EQ(s.message(), "Invalid qos specification");
  s = Update(kAlice, pending, {{"nodelist", "n9"}});
  EXPECT_EQ(s.message(), "Invalid node name specified");
  s = Update(kAlice, pending, {{"min_nodes", 5}});
  EXPECT_EQ(s.message(), "Node count specification invalid");
  s = Update(kAlice, pending, {{"num_cpus", 9}});
  EXPECT_EQ(s.message(), "requested node configuration is not available");
  s = Update(kAlice, pending, {{"dependency", "afterok:999999"}});
  EXPECT_EQ(s.message(), "job dependency problem: job 999999 does not exist");
  s = Update(kAlice, pending, {{"dependency", "afterok:" + std::to_string(pending)}});
  EXPECT_NE(s.message().find("cannot depend on itself"), std::string::npos) << s.ToString();
  s = Update(kAlice, pending, {{"array_throttle", 2}});
  EXPECT_NE(s.message().find("is not a job array"), std::string::npos) << s.ToString();
  // Another user's job.
  s = Update(Caller{1001, 1001, "bob"}, pending, {{"comment", "bob's"}});
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(asked(), before);
}

TEST_F(UpdatePendingTest, TheArraysThrottleChangesWhileItsTasksRun) {
  jobspec::JobSpec s = Spec(8);
  jobspec::ArraySpec& a = s.array.emplace();
  a.indices = {0, 1, 2, 3, 4, 5};
  a.text = "0-5";
  Result<JobId> array = controller_->Submit(kAlice, std::move(s));
  ASSERT_TRUE(array.ok()) << array.status().ToString();
  controller_->PassForTest();
  controller_->PassForTest();
  ASSERT_EQ(Field(*array, "state"), "RUNNING");
  ASSERT_TRUE(Update(kAlice, *array, {{"array_throttle", 1}}).ok());
  EXPECT_EQ(Job(*array)["array_max_running"], 1);
  // Pending-only fields refuse the whole array while a task runs, and change none of them.
  Status refused = Update(kAlice, *array, {{"partition", "cpu"}});
  EXPECT_EQ(refused.message(), "Job is no longer pending execution");
  EXPECT_EQ(Job(*array + 5)["partition"], "gpu");
}

// A QoS the site's policy keeps from a user: the update is judged as a submission would be.
TEST_F(UpdatePendingTest, AQosThePolicyForbidsIsRefused) {
  std::ofstream(dir_.File("policy.yaml"))
      << "rules:\n  - name: high-for-staff\n    match: {users: [alice]}\n"
         "    require: {qos: [normal]}\n";
  policy::GateOptions o;
  o.policy_file = dir_.File("policy.yaml");
  o.audit_log = dir_.File("audit.log");
  Result<std::unique_ptr<policy::PolicyGate>> gate = policy::PolicyGate::Open(o);
  ASSERT_TRUE(gate.ok()) << gate.status().ToString();
  controller_->SetPolicy(gate->get());
  Result<JobId> id = controller_->Submit(kAlice, [&] {
    jobspec::JobSpec s = Spec(1);
    s.hold = true;
    s.qos = "normal";
    return s;
  }());
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  Status s = Update(kAlice, *id, {{"qos", "high"}});
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_NE(s.message().find("high-for-staff"), std::string::npos) << s.ToString();
  EXPECT_EQ(Job(*id)["qos"], "normal");
  controller_->SetPolicy(nullptr);
}

TEST_F(UpdatePendingTest, PartitionStatesStartNothingOrTakeNothingAndOutliveARestart) {
  // Only operators.
  Status s = controller_->UpdatePartition(kAlice, "gpu", {{"state", "down"}});
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  s = controller_->UpdatePartition(kRoot, "nosuch", {{"state", "down"}});
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  s = controller_->UpdatePartition(kRoot, "gpu", {{"state", "sideways"}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);

  ASSERT_TRUE(controller_->UpdatePartition(kRoot, "gpu", {{"state", "down"}}).ok());
  Result<JobId> id = controller_->Submit(kAlice, Spec(1));  // DOWN still takes submissions
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  controller_->PassForTest();
  EXPECT_EQ(Job(*id)["reason"], "PartitionDown");
  ASSERT_TRUE(controller_->UpdatePartition(kRoot, "gpu", {{"state", "inactive"}}).ok());
  controller_->PassForTest();
  EXPECT_EQ(Job(*id)["reason"], "PartitionInactive");
  Result<JobId> refused = controller_->Submit(kAlice, Spec(1));
  EXPECT_EQ(refused.status().message().rfind("Required partition not available (inactive or drain)", 0),
            0u)
      << refused.status().ToString();

  // DRAIN: the queued job runs, a new one is refused.
  ASSERT_TRUE(controller_->UpdatePartition(kRoot, "gpu", {{"state", "drain"}}).ok());
  controller_->PassForTest();
  EXPECT_EQ(Job(*id)["state"], "RUNNING");
  EXPECT_FALSE(controller_->Submit(kAlice, Spec(1)).ok());
  nlohmann::json parts = controller_->ListPartitions()["partitions"];
  EXPECT_EQ(parts[0]["state"], "drain");

  // MaxTime: a job above it waits with PartitionTimeLimit; cpu becomes the default.
  ASSERT_TRUE(controller_->UpdatePartition(kRoot, "cpu", {{"max_time", 600}, {"default", true}}).ok());
  jobspec::JobSpec longer = Spec(1);
  longer.time_limit = 1200;
  Result<JobId> waits = controller_->Submit(kAlice, longer);
  ASSERT_TRUE(waits.ok()) << waits.status().ToString();
  controller_->PassForTest();
  EXPECT_EQ(Job(*waits)["partition"], "cpu");
  EXPECT_EQ(Job(*waits)["reason"], "PartitionTimeLimit");
  // The default may not be left without one.
  s = controller_->UpdatePartition(kRoot, "cpu", {{"default", false}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);

  // lockstepd restarts over the same YAML: the operators' changes stand.
  Stop();
  Start();
  parts = controller_->ListPartitions()["partitions"];
  EXPECT_EQ(parts[0]["state"], "drain");
  EXPECT_EQ(parts[0]["default"], false);
  EXPECT_EQ(parts[1]["default"], true);
  EXPECT_EQ(parts[1]["max_time"], 600);
  Report(testing::Nodes(4, 8));
  controller_->PassForTest();
  EXPECT_EQ(Job(*waits)["reason"], "PartitionTimeLimit");
  ASSERT_TRUE(controller_->UpdatePartition(kRoot, "cpu", {{"max_time", nullptr}}).ok());
  controller_->PassForTest();
  EXPECT_EQ(Job(*waits)["state"], "RUNNING");
}

TEST_F(UpdatePendingTest, NotifyReachesTheSrunsOfTheJobsRunningSteps) {
  Stop();
  backend_.steps = true;
  Start();
  Report(testing::Nodes(4, 8));
  const JobId pending = Held();
  Status s = controller_->Notify(kAlice, pending, "hello");
  EXPECT_EQ(s.message(), "Requested operation is presently disabled");
  const JobId id = Running();
  s = controller_->Notify(kAlice, id, "hello");
  EXPECT_NE(s.message().find("has no running srun"), std::string::npos) << s.ToString();
  Result<nlohmann::json> step =
      controller_->CreateStep(kAlice, id, {{"argv", {"sleep", "9"}}, {"stream", true}});
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  const std::int32_t sid = (*step)["step_id"];
  EXPECT_EQ(controller_->Notify(Caller{1001, 1001, "bob"}, id, "x").code(),
            StatusCode::kPermissionDenied);
  ASSERT_TRUE(controller_->Notify(kAlice, id, "checkpoint now").ok());
  ASSERT_TRUE(controller_->Notify(kRoot, id, "and again").ok());
  Result<nlohmann::json> read = nlohmann::json();
  controller_->StepOutput(
      kAlice, id, sid, 0, std::chrono::milliseconds(0),
      [&](Result<nlohmann::json> j) { read = std::move(j); }, false, 0);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ((*read)["notices"], nlohmann::json({"checkpoint now", "and again"}));
  EXPECT_EQ((*read)["notice"], 2);
  // A waiting read is answered by the next notice.
  std::promise<nlohmann::json> answered;
  controller_->StepOutput(
      kAlice, id, sid, 0, std::chrono::milliseconds(60000),
      [&](Result<nlohmann::json> j) { answered.set_value(j.ok() ? *j : nlohmann::json()); },
      false, 2);
  ASSERT_TRUE(controller_->Notify(kAlice, id, "third").ok());
  std::future<nlohmann::json> got = answered.get_future();
  ASSERT_EQ(got.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(got.get()["notices"], nlohmann::json({"third"}));
  // The event stream says so.
  EventBatch batch;
  controller_->event_log().Read(0, 1000, std::chrono::milliseconds(0), nullptr,
                                [&](EventBatch b) { batch = std::move(b); });
  int notified = 0;
  for (const nlohmann::json& e : batch.events)
    notified += e.value("kind", "") == "notified" && e.value("job_id", JobId{0}) == id;
  EXPECT_EQ(notified, 3);
}

}  // namespace
}  // namespace lockstep::controller
