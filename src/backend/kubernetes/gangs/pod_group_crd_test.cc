// The pod group scheduler with the PodGroup CRD installed (deploy/kubernetes/podgroup-crd.yaml)
// in a real kube-apiserver: gangs of pods labelled scheduling.x-k8s.io/pod-group, sized by their
// PodGroup's spec.minMember, the PodGroup's deletion, and the status lockstep writes to it
// (pod_group_status.h). Fixture: pod_group_test_fixture.h.
#include <gtest/gtest.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>

#include "backend/kubernetes/client/test_manifests.h"
#include "backend/kubernetes/gangs/pod_group_test_fixture.h"

namespace lockstep::kube::gangs_test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::Apply;
using testing::LoadManifest;
using testing::SourceDir;
using testing::WaitForCrdEstablished;

constexpr char kCrdName[] = "podgroups.scheduling.x-k8s.io";

class PodGroupCrdTest : public PodGroupSchedulerTest {
 protected:
  // The suite's apiserver, with the CRD installed and served.
  static void SetUpTestSuite() {
    StartApiServer("");
    if (!client_) return;  // skipped, or setup_error_ says why
    for (const Json& crd : LoadManifest(SourceDir() + "/deploy/kubernetes/podgroup-crd.yaml")) {
      Result<Json> r = Apply(*client_, crd);
      if (!r.ok()) setup_error_ = "podgroup-crd.yaml: " + r.status().ToString();
    }
    if (setup_error_.empty() &&
        !WaitForCrdEstablished(*client_, kCrdName, kPodGroupApi, milliseconds(30'000)))
      setup_error_ = std::string(kCrdName) + " was not established within 30 s";
  }

  std::string GroupPath(const std::string& name) const {
    return "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/" + ns_ + "/podgroups/" + name;
  }

  void CreatePodGroup(const std::string& name, int min_member) {
    Json group = {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
                  {"kind", "PodGroup"},
                  {"metadata", {{"name", name}, {"namespace", ns_}}},
                  {"spec", {{"minMember", min_member}, {"scheduleTimeoutSeconds", 60}}}};
    Result<Json> r = client_->Create(
        "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/" + ns_ + "/podgroups", group);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    NotePodGroupWrite(*r);
  }

  // Deletes a PodGroup the scheduler has, and waits until it has seen the deletion (the
  // apiserver answers a custom resource's deletion with a Status, without the resourceVersion
  // that Settle() could wait for).
  void DeletePodGroup(const std::string& name) {
    const std::string key = ns_ + "/" + name;
    ASSERT_TRUE(scheduler_->HasPodGroupForTest(key)) << key;
    Result<Json> r = client_->Delete(GroupPath(name));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(WaitFor([&] { return !scheduler_->HasPodGroupForTest(key); }, seconds(20)))
        << key;
  }

  // Pods [from, to) of PodGroup `group`, asking 8 GPUs each, owned by a Job named `group`.
  void CreateGroupPods(const std::string& group, int from, int to) {
    for (int i = from; i < to; ++i) {
      Json pod = GangPod(group + "-" + std::to_string(i), "", "");
      pod["metadata"].erase("annotations");
      pod["metadata"]["labels"] = {{kPodGroupLabel, group}};
      pod["metadata"]["ownerReferences"] = Json::array({{{"apiVersion", "batch/v1"},
                                                         {"kind", "Job"},
                                                         {"name", group},
                                                         {"uid", "0b6c2a8e-job-" + group}}});
      Result<Json> r = client_->Create(PodsPath(ns_), pod);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      NoteWrite(*r);
    }
  }

  // The kubelet's part: the pod's phase (and its container's end).
  void SetPodPhase(const std::string& pod, const std::string& phase, int exit_code = 0) {
    Json status = {{"phase", phase}};
    if (phase == "Succeeded" || phase == "Failed")
      status["containerStatuses"] = Json::array(
          {{{"name", "main"},
            {"ready", false},
            {"restartCount", 0},
            {"image", "busybox"},
            {"imageID", ""},
            {"state", {{"terminated", {{"exitCode", exit_code}, {"reason", "Completed"}}}}}}});
    Result<Json> r =
        client_->Patch(PodPath(ns_, pod) + "/status", PatchType::kMerge, {{"status", status}});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    NoteWrite(*r);
  }

  JobId JobOf(const std::string& group) { return scheduler_->JobOfGangForTest(ns_ + "/" + group); }

  Json StatusOf(const std::string& group) {
    Result<Json> g = client_->Get(GroupPath(group));
    return g.ok() ? g->value("status", Json::object()) : Json::object();
  }

  // Waits until the PodGroup's status has every field of `want`.
  bool WaitForStatus(const std::string& group, const Json& want) {
    return WaitFor(
        [&] {
          const Json have = StatusOf(group);
          for (const auto& [key, value] : want.items())
            if (!have.contains(key) || have[key] != value) return false;
          return true;
        },
        seconds(15));
  }
};

TEST_F(PodGroupCrdTest, GangIsBoundWholeOnlyOnceMinMemberPodsExist) {
  for (int i = 0; i < 4; ++i) CreateNode(i);
  SyncNodes();
  StartScheduler();
  ASSERT_TRUE(scheduler_->pod_groups_available());
  CreatePodGroup("llm", 4);
  CreateGroupPods("llm", 0, 3);
  Settle();  // the scheduler has seen the three pods and decided
  EXPECT_EQ(BoundCount("llm"), 0) << "3 of minMember 4";
  EXPECT_EQ(JobOf("llm"), 0u) << "no job for an incomplete gang";
  CreateGroupPods("llm", 3, 4);
  ASSERT_TRUE(WaitFor([&] { return BoundCount("llm") == 4; }, seconds(20)));
  std::set<std::string> nodes;
  for (const auto& [pod, node] : Placement("llm")) nodes.insert(node);
  EXPECT_EQ(nodes.size(), 4u);
  ASSERT_NE(JobOf("llm"), 0u);
  EXPECT_EQ(JobState(JobOf("llm")), "RUNNING");
  Json jobs = controller_->ListJobs({{"job", std::to_string(JobOf("llm"))}});
  ASSERT_EQ(jobs["jobs"].size(), 1u);
  EXPECT_EQ(jobs["jobs"][0]["name"], ns_ + "/llm");
  EXPECT_EQ(jobs["jobs"][0]["node_count"], 4);
}

TEST_F(PodGroupCrdTest, MinMemberLargerThanThePodsWaitsUntilItIsMet) {
  for (int i = 0; i < 8; ++i) CreateNode(i);
  SyncNodes();
  StartScheduler();
  CreatePodGroup("big", 6);
  CreateGroupPods("big", 0, 4);
  Settle();  // the scheduler has seen the four pods and decided
  EXPECT_EQ(BoundCount("big"), 0) << "4 pods of minMember 6";
  EXPECT_EQ(JobOf("big"), 0u);
  // Its owner lowers minMember to the pods it has: the gang is complete.
  Result<Json> r =
      client_->Patch(GroupPath("big"), PatchType::kMerge, {{"spec", {{"minMember", 4}}}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(WaitFor([&] { return BoundCount("big") == 4; }, seconds(20)));
}

// A pending gang whose PodGroup is deleted has its job cancelled and stays unbound, with a
// Warning Event naming the missing PodGroup, until the PodGroup is back.
TEST_F(PodGroupCrdTest, DeletingThePodGroupOfAPendingGangCancelsItsJob) {
  CreateNode(0);
  CreateNode(1, /*ready=*/false);
  SyncNodes();
  StartScheduler();
  CreatePodGroup("wait", 2);
  CreateGroupPods("wait", 0, 2);
  ASSERT_TRUE(WaitFor([&] { return JobOf("wait") != 0; }, seconds(10)));
  const JobId job = JobOf("wait");
  EXPECT_EQ(JobState(job), "PENDING");
  DeletePodGroup("wait");
  ASSERT_TRUE(WaitFor([&] { return JobState(job) == "CANCELLED"; }, seconds(10))) << JobState(job);
  auto has_event = [&] {
    for (const std::string& m : Events("FailedScheduling"))
      if (m.find("scheduling.x-k8s.io/pod-group: PodGroup " + ns_ + "/wait not found") !=
          std::string::npos)
        return true;
    return false;
  };
  EXPECT_TRUE(WaitFor(has_event, seconds(10)));
  SetNodeReady(1, true);
  SyncNodes();
  Settle();  // a scheduling pass with room for the gang, and the scheduler after it
  EXPECT_EQ(BoundCount("wait"), 0) << "pods of a deleted PodGroup are not scheduled";
  EXPECT_EQ(JobOf("wait"), 0u);
  // The PodGroup is back: a new job, bound whole.
  CreatePodGroup("wait", 2);
  ASSERT_TRUE(WaitFor([&] { return BoundCount("wait") == 2; }, seconds(20)));
  EXPECT_NE(JobOf("wait"), job);
}

// A bound gang does not need its PodGroup any more: it runs on and ends with its pods.
TEST_F(PodGroupCrdTest, DeletingThePodGroupOfABoundGangLeavesItRunning) {
  for (int i = 0; i < 2; ++i) CreateNode(i);
  SyncNodes();
  StartScheduler();
  CreatePodGroup("run", 2);
  CreateGroupPods("run", 0, 2);
  ASSERT_TRUE(WaitFor([&] { return BoundCount("run") == 2; }, seconds(20)));
  const JobId job = JobOf("run");
  DeletePodGroup("run");
  Settle();  // the scheduler has handled the deletion, the controller what it was told
  EXPECT_EQ(BoundCount("run"), 2);
  EXPECT_EQ(JobState(job), "RUNNING");
  for (int i = 0; i < 2; ++i) SetPodPhase("run-" + std::to_string(i), "Succeeded");
  ASSERT_TRUE(WaitFor([&] { return JobState(job) == "COMPLETED"; }, seconds(20))) << JobState(job);
}

// The status through a gang's life, the test playing the kubelet: Pending while incomplete,
// Scheduled once bound, Running, Finished; written only when it changes.
TEST_F(PodGroupCrdTest, StatusFollowsTheGangsLife) {
  for (int i = 0; i < 2; ++i) CreateNode(i);
  SyncNodes();
  StartScheduler();
  CreatePodGroup("life", 2);
  EXPECT_TRUE(WaitForStatus("life", {{"phase", "Pending"}})) << StatusOf("life").dump();
  CreateGroupPods("life", 0, 1);
  SettleStatus();  // the scheduler has seen the pod, and the status says what it makes of it
  EXPECT_TRUE(WaitForStatus("life", {{"phase", "Pending"}, {"scheduled", 0}}))
      << StatusOf("life").dump();

  CreateGroupPods("life", 1, 2);
  EXPECT_TRUE(WaitForStatus(
      "life",
      {{"phase", "Scheduled"}, {"scheduled", 2}, {"running", 0}, {"occupiedBy", ns_ + "/life"}}))
      << StatusOf("life").dump();
  const JobId job = JobOf("life");
  const std::string start = StatusOf("life").value("scheduleStartTime", "");
  EXPECT_EQ(start.size(), std::string("2026-12-01T10:00:00Z").size()) << start;

  SetPodPhase("life-0", "Running");
  SetPodPhase("life-1", "Running");
  EXPECT_TRUE(WaitForStatus("life", {{"phase", "Running"}, {"running", 2}}))
      << StatusOf("life").dump();
  SetPodPhase("life-0", "Succeeded");
  EXPECT_TRUE(WaitForStatus("life", {{"phase", "Running"}, {"running", 1}, {"succeeded", 1}}))
      << StatusOf("life").dump();
  SetPodPhase("life-1", "Succeeded");
  EXPECT_TRUE(WaitForStatus("life", {{"phase", "Finished"}, {"running", 0}, {"succeeded", 2}}))
      << StatusOf("life").dump();
  EXPECT_EQ(StatusOf("life").value("scheduleStartTime", ""), start) << "set once";
  ASSERT_TRUE(WaitFor([&] { return JobState(job) == "COMPLETED"; }, seconds(10)));

  // Nothing changes any more: nothing is written, once every pod change has been looked at.
  const std::int64_t writes = scheduler_->stats().status_writes;
  SettleStatus();
  EXPECT_EQ(scheduler_->stats().status_writes, writes);
}

// A burst of pod events (16 pods created, then bound) is a few writes, not one per event; a
// failing pod makes the group Failed.
TEST_F(PodGroupCrdTest, StatusWritesAreCoalescedAndAFailureIsFailed) {
  for (int i = 0; i < 16; ++i) CreateNode(i);
  SyncNodes();
  StartScheduler();
  CreatePodGroup("wide", 16);
  CreateGroupPods("wide", 0, 16);
  ASSERT_TRUE(WaitFor([&] { return BoundCount("wide") == 16; }, seconds(20)));
  EXPECT_TRUE(WaitForStatus("wide", {{"phase", "Scheduled"}, {"scheduled", 16}}))
      << StatusOf("wide").dump();
  // 32 pod events (creations and bindings): Pending, then Scheduling and Scheduled at most,
  // one a second.
  EXPECT_LE(scheduler_->stats().status_writes, 6);

  for (int i = 0; i < 16; ++i) SetPodPhase("wide-" + std::to_string(i), "Running");
  SetPodPhase("wide-3", "Failed", 3);
  EXPECT_TRUE(WaitForStatus("wide", {{"phase", "Failed"}, {"failed", 1}, {"running", 15}}))
      << StatusOf("wide").dump();
}

// Holds every PodGroup status write until the test opens it.
class StatusWriteGate {
 public:
  // The status writer's hook: counts the write and waits for Open().
  void Hold() {
    std::unique_lock<std::mutex> lock(mu_);
    ++held_;
    cv_.wait(lock, [&] { return open_; });
  }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  int held() {
    std::lock_guard<std::mutex> lock(mu_);
    return held_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;  // guarded by mu_
  int held_ = 0;       // guarded by mu_
};

// Binding never waits for status writes: with a write held until the gang is bound, it is bound.
TEST_F(PodGroupCrdTest, StatusWritesNeverHoldUpBinding) {
  for (int i = 0; i < 2; ++i) CreateNode(i);
  SyncNodes();
  auto gate = std::make_shared<StatusWriteGate>();  // the hook may outlive this body
  status_write_hook_ = [gate](const std::string&) { gate->Hold(); };
  // Opened however the body ends, before TearDown() stops the writer that waits at it.
  struct OpenAtEnd {
    StatusWriteGate& gate;
    ~OpenAtEnd() { gate.Open(); }
  } open_at_end{*gate};
  StartScheduler();
  CreatePodGroup("fast", 2);
  // Its first write (Pending) is under way: the gate holds it.
  ASSERT_TRUE(WaitFor([&] { return gate->held() >= 1; }, seconds(20)));
  CreateGroupPods("fast", 0, 2);
  EXPECT_TRUE(WaitFor([&] { return BoundCount("fast") == 2; }, seconds(20)))
      << "bound while a status write is held";
}

// scheduler-plugins' own CRD (its newer releases) has no status.scheduled, which the apiserver
// then drops, so the PodGroup's status never shows it: the rest of the status is written, and
// not again at each pod event (the writer compares with what it wrote last). Last of the suite:
// it swaps the CRD, then puts ours back.
TEST_F(PodGroupCrdTest, ACrdWithoutStatusScheduledGetsTheRestOfTheStatus) {
  const Json ours = LoadManifest(SourceDir() + "/deploy/kubernetes/podgroup-crd.yaml").at(0);
  Json theirs = ours;
  theirs["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]
      .erase("scheduled");
  ASSERT_TRUE(Apply(*client_, theirs).ok());
  struct PutOursBack {
    const Json& crd;
    ~PutOursBack() { EXPECT_TRUE(Apply(*client_, crd).ok()); }
  } put_back{ours};
  CreatePodGroup("probe", 1);
  ASSERT_TRUE(WaitFor(
      [&] {
        Result<Json> r = client_->Patch(GroupPath("probe") + "/status", PatchType::kMerge,
                                        {{"status", {{"scheduled", 1}}}});
        return r.ok() && !r->value("status", Json::object()).contains("scheduled");
      },
      seconds(10)))
      << "the apiserver still keeps status.scheduled";

  for (int i = 0; i < 2; ++i) CreateNode(i);
  SyncNodes();
  StartScheduler();
  CreatePodGroup("theirs", 2);
  CreateGroupPods("theirs", 0, 2);
  EXPECT_TRUE(WaitForStatus("theirs", {{"phase", "Scheduled"}, {"running", 0}}))
      << StatusOf("theirs").dump();
  EXPECT_FALSE(StatusOf("theirs").contains("scheduled"));
  SettleStatus();  // the binding's writes are done
  const std::int64_t writes = scheduler_->stats().status_writes;
  // A pod event that changes nothing of the status: looked at (the barrier), and no write.
  Result<Json> touched = client_->Patch(PodPath(ns_, "theirs-0"), PatchType::kMerge,
                                        {{"metadata", {{"labels", {{"touched", "yes"}}}}}});
  ASSERT_TRUE(touched.ok()) << touched.status().ToString();
  NoteWrite(*touched);
  SettleStatus();
  EXPECT_EQ(scheduler_->stats().status_writes, writes);
  SetPodPhase("theirs-0", "Running");
  SetPodPhase("theirs-1", "Running");
  EXPECT_TRUE(WaitForStatus("theirs", {{"phase", "Running"}, {"running", 2}}))
      << StatusOf("theirs").dump();
}

}  // namespace
}  // namespace lockstep::kube::gangs_test
